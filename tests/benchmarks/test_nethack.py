"""NLE NetHackScore (``nle/nethack-score``) in the Host: no ``nle`` needed, so these run in the default suite.

The family runs its Environments in its own environment (``evoledger env install nle``); here the Host's half is
checked: the catalogue row and its own-environment declaration, the spec and spaces built without importing ``nle``,
and the Feedback read from hand-made recorded observations (depth, level, death cause, messages). The spaces and
Episodes against NLE itself are checked inside the family's venv by ``test_nethack_venv.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks import nethack
from evoledger.benchmarks.nethack import ACTIONS, BENCHMARKS, CATALOG, EXTRA, NetHackBenchmark, NetHackConfig
from evoledger.benchmarks.nethack_screen import BLSTATS, end_of_game, in_game, map_rows, message_text, named_stats
from evoledger.kernel.authoring import EpisodeRecord, Extra, Trajectory, benchmark_programs
from pydantic import ValidationError

NAME = "nle/nethack-score"
PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The factory as it runs once the family's environment is installed (the Host still has no ``nle``)."""
    monkeypatch.setattr(nethack, "EXTRA", Extra("nle", ()))
    return nethack.make_nethack_score  # the registry would check the catalogue row's extra first


def test_the_catalogue_row_declares_its_own_environment() -> None:
    assert list(BENCHMARKS) == [NAME] == [e.name for e in CATALOG]
    assert CATALOG[0].family == "nle"
    assert CATALOG[0].extra == EXTRA
    assert EXTRA.modules == ("nle",)
    own = EXTRA.own_environment
    assert own is not None
    assert own.requirements == ("nle==1.3.0", "gymnasium==1.2.0")
    assert "gymnasium 1.2.0" in own.reason
    assert nethack.make_nethack_score.config_model is NetHackConfig  # type: ignore[attr-defined]


def test_without_its_environment_the_cli_refuses_in_one_line(tmp_path: Path) -> None:
    cli = "import sys; from evoledger.kernel.cli import main; sys.exit(main())"
    program = PROGRAMS / "nle-nethack-baseline"
    refused = subprocess.run(
        [sys.executable, "-c", cli, "evaluate", str(program), "--benchmark", NAME, "--episodes", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "EVOLEDGER_ENVS": str(tmp_path / "envs")},  # no family venv, even where one is installed
    )
    assert refused.returncode == 2
    assert refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("error: nle/nethack-score needs")
    assert line.endswith("evoledger env install nle"), line


def test_the_host_builds_the_benchmark_without_importing_nle(host: Any) -> None:
    benchmark = host()
    assert "nle" not in sys.modules
    spec = benchmark.spec
    assert spec.action_space == {"type": "Discrete", "n": 23, "start": 0}
    observation = spec.observation_space
    assert observation["type"] == "Dict"
    assert list(observation["spaces"]) == sorted(nethack.OBSERVATION_SPACES)
    assert observation["spaces"]["chars"] == {"type": "Box", "shape": [21, 79], "dtype": "uint8", "low": 0, "high": 255}
    assert spec.max_episode_steps == 5_000
    assert spec.metadata["failure_return"] == -5_000.0
    assert spec.metadata["gymnasium_version"] == "1.2.0"  # the family's, whatever the Host runs
    assert spec.metadata["actions"] == list(ACTIONS)
    assert len(ACTIONS) == 23
    assert spec.metadata["blstats"] == list(BLSTATS)
    assert spec.environment_parameters["fix_moon_phase"] is True
    assert "Score (mean_return, maximize)" in spec.description
    short = host(max_episode_steps=100)
    assert short.spec.metadata["failure_return"] == -100.0
    assert short.spec.parameters_digest != spec.parameters_digest
    episodes = benchmark.episodes("train", seed=1, count=3)
    assert len({e.seed for e in episodes}) == 3
    programs = benchmark_programs(benchmark)
    assert programs.baseline.name == "nle-nethack-baseline"
    assert programs.heuristic is not None
    assert programs.heuristic.name == "nle-nethack-heuristic"
    with pytest.raises(ValidationError, match="max_episode_steps"):
        host(max_episode_steps=5_001)
    with pytest.raises(ValidationError, match="character"):
        host(character="val-hum-neu-fem")  # the Monk only, as upstream
    assert "nle" not in sys.modules


def _codes(text: str, size: int) -> np.ndarray[Any, Any]:
    codes = np.zeros(size, np.uint8)
    codes[: len(text)] = list(text.encode("latin-1"))
    return codes


def _observation(
    *, depth: int = 1, level: int = 1, score: int = 0, time: int = 1, message: str = "", tty: tuple[str, ...] = ()
) -> dict[str, Any]:
    stats = np.zeros(len(BLSTATS), np.int64)
    stats[BLSTATS.index("depth")], stats[BLSTATS.index("experience_level")] = depth, level
    stats[BLSTATS.index("score")], stats[BLSTATS.index("time")] = score, time
    stats[BLSTATS.index("max_hitpoints")] = 14 if time else 0
    chars = np.full((21, 79), ord(" "), np.uint8)
    chars[3, 4] = ord("@")
    tty_chars = np.full((24, 80), ord(" "), np.uint8)
    for row, line in enumerate(tty):
        tty_chars[row, : len(line)] = list(line.encode("latin-1"))
    return {"blstats": stats, "chars": chars, "message": _codes(message, 256), "tty_chars": tty_chars}


TOP_TEN = (
    "",
    "You made the top ten list!",
    "",
    "                           No  Points     Name",
    "                 Hp [max]",
    "                           1         61  Agent-Mon-Hum-Mal-Neu died in The Dunge",
    "ons of Doom on",
    "                                        level 2.  Killed by a newt, while fainte",
    "d from lack",
    "                                       of food.",
    "               -  [14]",
)
"""The last screen of a game NLE ended by death (rows wrap at 80 columns)."""


def test_the_screen_is_read_without_nle() -> None:
    playing = _observation(depth=3, level=2, score=120, message="The jackal bites!")
    assert message_text(playing) == "The jackal bites!"
    stats = named_stats(playing)
    assert (stats["depth"], stats["experience_level"], stats["score"]) == (3, 2, 120)
    assert in_game(stats)
    assert not in_game(named_stats(_observation(depth=0, level=0, time=0)))
    rows = map_rows(playing)
    assert rows is not None
    assert len(rows) == 21
    assert rows[3][4] == "@"
    over = _observation(depth=0, level=0, time=0, tty=TOP_TEN)
    assert end_of_game([playing, over]) == (
        "died in The Dungeons of Doom on level 2. Killed by a newt, while fainted from lack of food."
    )
    assert end_of_game([playing]) is None
    assert named_stats({"blstats": [1, 2]}) == {} == named_stats("not a dict")


def _record(index: int, observations: list[dict[str, Any]], *, terminated: bool) -> EpisodeRecord:
    steps = len(observations) - 1
    rewards = [0.0] * (steps - 1) + [-0.01] if steps else []
    metrics = [
        {"depth": float(d), "experience_level": float(d), "hitpoints": 9.0, "game_score": 50.0 * (d - 1)}
        for d in range(1, steps + 1)
    ]
    trajectory = Trajectory(
        observations=observations,
        actions=[19] * steps,
        rewards=rewards,
        terminated=terminated,
        truncated=not terminated,
        metrics=metrics,
    )
    return EpisodeRecord(
        split="train",
        index=index,
        status="ok",
        episode_return=float(sum(rewards)),
        steps=steps,
        terminated=terminated,
        truncated=not terminated,
        trajectory=trajectory,
    )


def test_feedback_says_how_deep_how_experienced_how_each_game_ended_and_what_was_said(host: Any) -> None:
    benchmark: NetHackBenchmark = host(max_episode_steps=4)
    died = _record(
        0,
        [
            _observation(message="Hello Agent, welcome to NetHack!"),
            _observation(depth=2, level=2, score=50, time=30, message="You see here a newt corpse."),
            _observation(depth=2, level=2, score=50, time=31, message="The newt bites!"),
            _observation(depth=0, level=0, time=0, tty=TOP_TEN),
        ],
        terminated=True,
    )
    alive = _record(1, [_observation(), _observation(time=2), _observation(time=3)], terminated=False)
    feedback = benchmark.feedback([died, alive])
    content = feedback.content
    assert content["outcome_counts"] == {"died": 1, "timed_out": 1}
    notes = content["per_episode"]["0"]["notes"]
    assert (notes["max_depth"], notes["max_experience_level"], notes["game_score"]) == (3.0, 3.0, 100.0)
    assert notes["turns"] == 31.0  # the last screen of the game, not the top-ten list
    assert notes["starved"] == 1.0
    assert notes["frozen_step_share"] == pytest.approx(1 / 3)
    assert content["per_episode"]["1"]["notes"]["starved"] == 0.0
    assert content["deaths"] == {
        "0": "died in The Dungeons of Doom on level 2. Killed by a newt, while fainted from lack of food."
    }
    assert content["last_messages"]["0"] == [
        [0, "Hello Agent, welcome to NetHack!"],
        [1, "You see here a newt corpse."],
        [2, "The newt bites!"],
    ]
    assert content["last_messages"]["1"] == []
    trace = next(a for a in feedback.artifacts if a.name == "trace.jsonl")
    second = json.loads(trace.data.decode().splitlines()[1])
    assert second["observation"]["message"] == "You see here a newt corpse."
    assert second["observation"]["stats"]["depth"] == 2
    assert second["observation"]["map"][3][4] == "@"
    json.dumps(content)  # publishable as it is
