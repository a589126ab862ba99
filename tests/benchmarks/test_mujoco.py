"""The MuJoCo v5 family: listing without the extra, settings, score rule, Feedback words, and one real Episode.

Kept cheap for the default suite (a few seconds in total); every task's heuristic-beats-baseline, conformance and
built-in-Agent Runs are in ``test_mujoco_catalog.py`` under the ``catalog`` marker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.mujoco import BENCHMARKS, CATALOG, EXTRA, TASKS, make_hopper, make_inverted_pendulum
from evoledger.benchmarks.mujoco_settings import HopperConfig
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import ConfigError

NAMES = [
    "mujoco/ant",
    "mujoco/half-cheetah",
    "mujoco/hopper",
    "mujoco/humanoid",
    "mujoco/humanoid-standup",
    "mujoco/inverted-double-pendulum",
    "mujoco/inverted-pendulum",
    "mujoco/pusher",
    "mujoco/reacher",
    "mujoco/swimmer",
    "mujoco/walker2d",
]

_WITHOUT_MUJOCO = """
import json, sys
sys.modules["mujoco"] = None  # as if the extra were not installed: find_spec and import both fail
from evoledger.benchmarks import mujoco as family
from evoledger.ledger.errors import MissingExtraError
try:
    family.BENCHMARKS["mujoco/hopper"]()
except MissingExtraError as exc:
    error = str(exc)
print(json.dumps({"names": sorted(family.BENCHMARKS), "catalog": [e.name for e in family.CATALOG], "error": error,
                  "mujoco_imported": sys.modules.get("mujoco") is not None}))
"""


def test_the_family_lists_every_task_without_importing_mujoco() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_MUJOCO], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listing = json.loads(done.stdout)
    assert listing["names"] == NAMES
    assert listing["catalog"] == NAMES
    assert "pip install 'evoledger[mujoco]'" in listing["error"]
    assert "mujoco/hopper" in listing["error"]
    assert listing["mujoco_imported"] is False


def test_catalog_entries_and_shipped_programs_match_the_registry() -> None:
    assert list(BENCHMARKS) == NAMES == [t.name for t in TASKS]
    assert [e.name for e in CATALOG] == NAMES
    assert all(e.family == "mujoco" and e.extra == EXTRA for e in CATALOG)
    assert EXTRA.modules == ("mujoco",)
    assert set(NAMES) <= set(default_registry().names())
    programs = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    for task in TASKS:
        shipped = benchmark_programs(default_registry().make(task.name))
        assert shipped.baseline == programs / "mujoco-baseline"  # one zero-action baseline for every task
        assert shipped.heuristic == programs / f"mujoco-{task.task}-heuristic"
        assert (shipped.heuristic / "policy.py").is_file(), task.task
    assert (programs / "mujoco-baseline" / "policy.py").is_file()


def test_settings_reach_gymnasium_and_the_spec_and_scale_the_failure_return() -> None:
    default = make_hopper()
    assert default.spec.id == "mujoco/hopper"
    assert default.spec.environment_parameters["gymnasium_id"] == "Hopper-v5"
    assert default.spec.environment_parameters["healthy_z_range"] == [0.7, None]  # upstream (0.7, inf)
    assert default.spec.metadata["failure_return"] == -1000.0
    assert default.spec.max_episode_steps == 1000
    assert "Score (mean_return, maximize)" in default.spec.description
    changed = make_hopper(max_episode_steps=500, ctrl_cost_weight=0.004, healthy_z_range=[0.5, 3.0], frame_skip=2)
    assert changed.spec.metadata["failure_return"] == -1000.0 * 4 * 0.5
    assert changed.spec.parameters_digest != default.spec.parameters_digest
    assert changed.dt == pytest.approx(default.dt / 2)
    env = changed.make_environment(changed.episodes("train", seed=1, count=1)[0])
    try:
        env.reset()
        inner = env._env.unwrapped  # the Gymnasium environment really got the settings
        assert inner.frame_skip == 2
        assert inner._healthy_z_range == (0.5, 3.0)
    finally:
        env.close()
    assert default_registry().config_model("mujoco/hopper") is HopperConfig


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"healthy_z_range": [0.9, 0.1]}, "range [0.9, 0.1] is empty"),
        ({"frame_skp": 3}, "did you mean 'frame_skip'"),
        ({"frame_skip": 0}, "--set frame_skip=0"),
        ({"ctrl_cost_weight": -1}, "--set ctrl_cost_weight=-1"),
    ],
)
def test_invalid_settings_are_one_line_errors(config: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match="valid keys") as caught:
        default_registry().make("mujoco/hopper", config)
    assert fragment in str(caught.value)


def test_feedback_names_balanced_and_dropped_with_notes(play_program: Any) -> None:
    benchmark = make_inverted_pendulum(max_episode_steps=60)
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    dropped = play_program(benchmark, programs.baseline, count=2)
    balanced = play_program(benchmark, programs.heuristic, count=2)
    content = benchmark.feedback([*dropped, *balanced]).content
    assert content["outcome_counts"] == {"balanced": 2, "dropped": 2}
    assert content["per_episode"]["0"]["outcome"] == "dropped"
    assert content["per_episode"]["0#2"]["notes"]["balanced_steps"] == 60.0
    assert content["per_episode"]["0"]["notes"]["max_pole_angle"] > 0.2  # it fell past the limit
    first = dropped[0].trajectory
    assert first is not None
    assert set(first.metrics[0]) == {"cart_position", "pole_angle", "max_pole_angle"}


def test_the_baseline_runs_one_real_episode_and_publishes_feedback(tmp_path: Path) -> None:
    name = "mujoco/reacher"
    programs = benchmark_programs(default_registry().make(name))
    result = evaluate(programs.baseline, name, config=EvaluationConfig(episodes=1, seed=3), record_to=tmp_path / "r")
    assert [e.status for e in result.episodes] == ["ok"]
    assert result.episodes[0].steps == 50
    assert result.score is not None
    assert -100.0 < result.score < 0.0
    content = result.feedback_content
    assert content["outcome_counts"] == {"missed": 1}  # the arm does not move
    notes = content["per_episode"]["0"]["notes"]
    assert notes["control_cost"] == 0.0
    assert notes["final_distance"] > 0.02
