"""ALE Tetris (``ale/tetris``): listing without the extra, settings, reading the well, Feedback, one real Episode.

Kept cheap for the default suite (a few seconds in total); the heuristic beating NOOP over whole Episodes, the
built-in-Agent Run and replay are in ``test_ale_tetris_catalog.py`` under the ``catalog`` marker.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.ale_tetris import ACTIONS, BENCHMARKS, CATALOG, EXTRA, TetrisConfig, read_well
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.ledger.errors import ConfigError
from evoledger.tests.support.program_module import load_program_module

pytestmark = pytest.mark.skipif(not EXTRA.installed, reason=f"needs the extra 'ale': {EXTRA.install_command}")

NAME = "ale/tetris"
CLI = "import sys; sys.modules['ale_py'] = None; from evoledger.kernel.cli import main; sys.exit(main())"
"""The real CLI as if the extra were not installed (``import ale_py`` and ``find_spec`` both fail)."""


def test_without_the_extra_the_cli_refuses_in_one_line_with_the_install_command(tmp_path: Path) -> None:
    """Listing without the extra is checked for every family in tests/kernel/test_catalog_registry.py."""
    program = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "ale-tetris-baseline"
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
        "error: ale/tetris needs the optional extra 'ale' (module 'ale_py' is not installed); install it with: "
        "pip install 'evoledger[ale]'"
    ]


def test_the_catalogue_row_extra_and_shipped_programs() -> None:
    assert list(BENCHMARKS) == [NAME] == [e.name for e in CATALOG]
    assert CATALOG[0].family == "ale"
    assert CATALOG[0].extra == EXTRA
    assert EXTRA.modules == ("ale_py",)
    programs = benchmark_programs(default_registry().make(NAME))
    assert programs.baseline.name == "ale-tetris-baseline"
    assert programs.heuristic is not None
    assert programs.heuristic.name == "ale-tetris-heuristic"
    assert default_registry().config_model(NAME) is TetrisConfig


def test_the_spec_states_upstream_settings_and_the_failure_score_scales_with_the_step_limit() -> None:
    default = default_registry().make(NAME)
    spec = default.spec
    assert spec.observation_space == {"type": "Box", "shape": [210, 160, 3], "dtype": "uint8", "low": 0, "high": 255}
    assert spec.action_space == {"type": "Discrete", "n": 5, "start": 0}
    assert spec.max_episode_steps == 27_000
    assert spec.metadata["failure_return"] == -27_000.0
    assert spec.metadata["actions"] == list(ACTIONS)
    parameters = spec.environment_parameters
    assert parameters["gymnasium_id"] == "ALE/Tetris-v5"
    assert (parameters["frameskip"], parameters["repeat_action_probability"]) == (4, 0.25)
    assert parameters["full_action_space"] is False
    assert "Score (mean_return, maximize)" in spec.description
    ram = default_registry().make(NAME, {"observation": "ram", "max_episode_steps": 500})
    assert ram.spec.observation_space["shape"] == [128]
    assert ram.spec.metadata["failure_return"] == -500.0
    assert ram.spec.parameters_digest != spec.parameters_digest


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"observation": "grey"}, "observation"),
        ({"max_episode_steps": 27_001}, "max_episode_steps"),
        ({"repeat_action_probability": 1.0}, "repeat_action_probability"),
        ({"frameskip": 2}, "frameskip"),
    ],
)
def test_invalid_settings_are_config_errors(config: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        default_registry().make(NAME, config)


def test_the_well_is_read_from_the_screen_where_the_description_says() -> None:
    benchmark = default_registry().make(NAME, {"repeat_action_probability": 0.0})
    env = benchmark.make_environment(benchmark.episodes("train", seed=4, count=1)[0])
    try:
        env.reset()
        screen = env.step(0).observation  # the first piece (an O here) appears at the top, columns 3 and 4
        for _ in range(3):
            screen = env.step(2).observation  # RIGHT
    finally:
        env.close()
    well = read_well(screen)
    assert well.shape == (22, 10)
    rows, columns = well.nonzero()
    assert len(rows) == 4
    assert rows.max() <= 3  # still near the top
    assert columns.min() > 3  # moved right


def test_feedback_names_outcomes_and_counts_actions(play_program: Any) -> None:
    ram = default_registry().make(NAME, {"observation": "ram"})  # cheap to record: 128 bytes a step
    programs = benchmark_programs(ram)
    (topped,) = play_program(ram, programs.baseline, count=1)  # NOOP stacks to the top in about 420 steps
    timed = dataclasses.replace(topped, index=1, terminated=False, truncated=True)  # as if the step limit came first
    content = ram.feedback([topped, timed]).content
    assert content["outcome_counts"] == {"timed_out": 1, "topped_out": 1}
    notes = content["per_episode"]["0"]["notes"]
    assert notes["noop_share"] == 1.0
    assert notes["right_share"] == 0.0
    assert notes["rows_cleared"] == 0.0
    assert topped.steps > 100
    assert topped.trajectory is not None
    assert topped.trajectory.metrics[-1] == {"rows_cleared": 0.0}


def test_the_trace_shows_the_well_and_frames_are_rendered_without_opengl(play_program: Any) -> None:
    short = default_registry().make(NAME, {"max_episode_steps": 4})
    (record,) = play_program(short, benchmark_programs(short).baseline, count=1)
    record = dataclasses.replace(record, episode=short.episodes("train", seed=0, count=1)[0])  # as the Host gives it
    feedback = short.feedback([record])
    trace = next(a for a in feedback.artifacts if a.name == "trace.jsonl")
    first = json.loads(trace.data.decode().splitlines()[0])
    assert len(first["observation"]) == 22  # the well, not the image
    assert set("".join(first["observation"])) <= {".", "#"}
    sheet = next(a for a in feedback.artifacts if a.name == "frames/episode-0000.png")
    assert sheet.data.startswith(b"\x89PNG")
    assert feedback.content["visual_evidence"]["notes"] == []


def test_the_heuristic_clears_rows_where_noop_clears_none() -> None:
    """In-process, without recording (a recorded image costs a list of 100,800 numbers per step here)."""
    benchmark = default_registry().make(NAME, {"max_episode_steps": 400, "repeat_action_probability": 0.0})
    heuristic = benchmark_programs(benchmark).heuristic
    assert heuristic is not None
    policy = load_program_module(heuristic).make_policy(None)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    rows = 0.0
    try:
        observation, ended = env.reset(), False
        while not ended:
            step = env.step(policy.act(observation))
            observation, ended, rows = step.observation, step.terminated or step.truncated, rows + step.reward
    finally:
        env.close()
    assert rows >= 2.0  # about 5 rows in 400 steps; NOOP never clears one


def test_the_baseline_runs_one_real_episode_through_evaluate(tmp_path: Path) -> None:
    programs = benchmark_programs(default_registry().make(NAME))
    short = BenchmarkRef(name=NAME, config={"max_episode_steps": 40})
    result = evaluate(programs.baseline, short, config=EvaluationConfig(episodes=1, seed=3), record_to=tmp_path / "r")
    assert [e.status for e in result.episodes] == ["ok"]
    assert result.episodes[0].steps == 40
    assert result.score == 0.0
    assert result.feedback_content["outcome_counts"] == {"timed_out": 1}
