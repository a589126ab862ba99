"""Stable-Retro Airstriker (``retro/airstriker``): the install hint, settings, reading the screen, Feedback, one real
Episode.

Kept cheap for the default suite (a few seconds in total); the heuristic beating the baseline over whole Episodes,
the built-in-Agent Run and replay are in ``test_retro_airstriker_catalog.py`` under the ``catalog`` marker.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.retro_airstriker import (
    BENCHMARKS,
    BUTTONS,
    CATALOG,
    EXTRA,
    AirstrikerConfig,
    read_screen,
)
from evoledger.kernel.authoring import InvalidAction, benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.ledger.errors import ConfigError
from evoledger.tests.support.program_module import load_program_module

pytestmark = pytest.mark.skipif(not EXTRA.installed, reason=f"needs the extra 'retro': {EXTRA.install_command}")

NAME = "retro/airstriker"
CLI = "import sys; sys.modules['stable_retro'] = None; from evoledger.kernel.cli import main; sys.exit(main())"
"""The real CLI as if the extra were not installed (``import stable_retro`` and ``find_spec`` both fail)."""
PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"


def test_without_the_extra_the_cli_refuses_in_one_line_with_the_install_command(tmp_path: Path) -> None:
    """Listing without the extra is checked for every family in tests/kernel/test_catalog_registry.py."""
    program = PROGRAMS / "retro-airstriker-baseline"
    refused = subprocess.run(
        [sys.executable, "-c", CLI, "evaluate", str(program), "--benchmark", NAME, "--episodes", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "error: retro/airstriker needs the optional extra 'retro' (module 'stable_retro' is not installed); "
        "install it with: pip install 'evoledger[retro]'"
    ]


def test_the_catalogue_row_extra_and_shipped_programs() -> None:
    assert list(BENCHMARKS) == [NAME] == [e.name for e in CATALOG]
    assert CATALOG[0].family == "retro"
    assert CATALOG[0].extra == EXTRA
    assert EXTRA.modules == ("stable_retro",)
    programs = benchmark_programs(default_registry().make(NAME))
    assert programs.baseline.name == "retro-airstriker-baseline"
    assert programs.heuristic is not None
    assert programs.heuristic.name == "retro-airstriker-heuristic"
    assert default_registry().config_model(NAME) is AirstrikerConfig


def test_the_spec_states_upstream_settings_and_the_failure_score_is_minus_the_frame_limit() -> None:
    spec = default_registry().make(NAME).spec
    assert spec.observation_space == {"type": "Box", "shape": [224, 320, 3], "dtype": "uint8", "low": 0, "high": 255}
    assert spec.action_space == {"type": "MultiBinary", "n": [12]}
    assert spec.max_episode_steps == 4_500
    assert spec.metadata["failure_return"] == -18_000.0
    assert spec.metadata["buttons"] == list(BUTTONS)
    parameters = spec.environment_parameters
    assert parameters["gymnasium_id"] == "Airstriker-Genesis-v0"
    assert (parameters["state"], parameters["frameskip"], parameters["sticky_probability"]) == ("Level1", 4, 0.25)
    assert "Score (mean_score, maximize)" in spec.description
    ram = default_registry().make(NAME, {"observation": "ram", "max_episode_steps": 500, "frameskip": 2})
    assert ram.spec.observation_space["shape"] == [65536]
    assert ram.spec.metadata["failure_return"] == -1_000.0
    assert ram.spec.parameters_digest != spec.parameters_digest


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"observation": "grey"}, "observation"),
        ({"max_episode_steps": 18_001}, "max_episode_steps"),
        ({"sticky_probability": 1.0}, "sticky_probability"),
        ({"frameskip": 9}, "frameskip"),
        ({"state": "Level2"}, "state"),
        ({"game": "SonicTheHedgehog-Genesis"}, "game"),
    ],
)
def test_invalid_settings_are_config_errors(config: dict[str, object], fragment: str) -> None:
    """Only level 1 of the bundled ROM: neither another game nor another state is a setting."""
    with pytest.raises(ConfigError, match=fragment):
        default_registry().make(NAME, config)


def _play(benchmark: Any, actions: list[Any], seed: int) -> list[Any]:
    env = benchmark.make_environment(benchmark.episodes("train", seed=seed, count=1)[0])
    try:
        steps = [env.reset()]
        for action in actions:
            steps.append(env.step(action))
    finally:
        env.close()
    return steps


def test_actions_are_checked_strictly_and_episodes_follow_their_seed() -> None:
    benchmark = default_registry().make(NAME, {"max_episode_steps": 60})
    env = benchmark.make_environment(benchmark.episodes("train", seed=1, count=1)[0])
    try:
        env.reset()
        for bad in ([0] * 11, [2] + [0] * 11, [0.5] * 12, 3):
            with pytest.raises(InvalidAction):
                env.step(bad)
        assert env.step([True] + [False] * 11).reward == 0.0  # bools are buttons too
    finally:
        env.close()
    fire = [[t % 2, 0, 0, 0, 0, 0, int(t % 6 < 3), 0, 0, 0, 0, 0] for t in range(59)]  # B, LEFT
    first, again = _play(benchmark, fire, seed=2), _play(benchmark, fire, seed=2)
    assert all(np.array_equal(a.observation, b.observation) for a, b in zip(first[1:], again[1:], strict=True))
    other = _play(benchmark, fire, seed=3)  # another seed draws other sticky frames: the ship ends elsewhere
    assert any(not np.array_equal(a.observation, b.observation) for a, b in zip(first[1:], other[1:], strict=True))


def test_the_screen_is_read_where_the_description_says() -> None:
    benchmark = default_registry().make(NAME, {"sticky_probability": 0.0})
    right = [0] * 12
    right[BUTTONS.index("RIGHT")] = 1
    steps = _play(benchmark, [[0] * 12] * 80 + [right] * 20, seed=0)
    start = read_screen(steps[80].observation)
    moved = read_screen(steps[-1].observation)
    assert start is not None
    assert moved is not None
    assert abs(start["ship_column"] - 156) <= 4  # the ship starts in the middle of the 320-pixel screen
    assert moved["ship_column"] > start["ship_column"] + 20
    assert read_screen(np.zeros((210, 160, 3), np.uint8)) is None
    assert steps[1].metrics == {"score": 0.0, "lives": 3.0}  # the game's own counters
    assert steps[-1].metrics["score"] == 0.0  # nothing fired


def test_feedback_names_outcomes_notes_and_shows_the_screen_read_in_the_trace(play_program: Any) -> None:
    short = default_registry().make(NAME, {"max_episode_steps": 6})
    (record,) = play_program(short, benchmark_programs(short).heuristic, count=1)
    record = dataclasses.replace(record, episode=short.episodes("train", seed=0, count=1)[0])  # as the Host gives it
    over = dataclasses.replace(record, index=1, terminated=True, truncated=False)  # as if the game had ended
    feedback = short.feedback([record, over])
    content = feedback.content
    assert content["outcome_counts"] == {"game_over": 1, "timed_out": 1}
    notes = content["per_episode"]["0"]["notes"]
    assert notes["frames"] == 24.0
    assert notes["lives_left"] == 3.0
    assert notes["b_share"] == 0.5  # the heuristic presses B every other step
    assert "first_life_lost_step" not in notes
    trace = next(a for a in feedback.artifacts if a.name == "trace.jsonl")
    first = json.loads(trace.data.decode().splitlines()[0])
    assert set(first["observation"]) == {"ship_column", "enemy_columns", "enemy_shot_columns"}
    sheet = next(a for a in feedback.artifacts if a.name == "frames/episode-0000.png")
    assert sheet.data.startswith(b"\x89PNG")
    assert content["visual_evidence"]["notes"] == []


def test_the_heuristic_scores_where_the_baseline_scores_nothing() -> None:
    """In-process and without recording; the comparison through evaluate() is in the catalog tests."""
    benchmark = default_registry().make(NAME, {"max_episode_steps": 250})
    policy = load_program_module(PROGRAMS / "retro-airstriker-heuristic").make_policy(None)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    score = 0.0
    try:
        observation, ended = env.reset(), False
        while not ended:
            step = env.step(policy.act(observation))
            observation, ended, score = step.observation, step.terminated or step.truncated, score + step.reward
    finally:
        env.close()
    assert score >= 60.0  # about 200 points in 250 steps; pressing nothing never scores


def test_the_baseline_runs_one_real_episode_through_evaluate(tmp_path: Path) -> None:
    programs = benchmark_programs(default_registry().make(NAME))
    short = BenchmarkRef(name=NAME, config={"max_episode_steps": 30})
    result = evaluate(programs.baseline, short, config=EvaluationConfig(episodes=1, seed=3), record_to=tmp_path / "r")
    assert [e.status for e in result.episodes] == ["ok"]
    assert result.episodes[0].steps == 30
    assert result.score == 0.0
    assert result.feedback_content["outcome_counts"] == {"timed_out": 1}
