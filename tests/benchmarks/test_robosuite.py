"""The robosuite family on the Host side: names, the missing-environment error, spaces, spec, score rule, Feedback
words and the shipped Programs, all without ``robosuite`` (the family runs in a venv of its own).

The checks that need the real environments run inside that venv: ``test_robosuite_venv.py``.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.robosuite_manipulation import (
    BENCHMARKS,
    CATALOG,
    EXTRA,
    HEURISTICS,
    TASKS,
    RobosuiteBenchmark,
    RobosuiteConfig,
    stages,
)
from evoledger.kernel.authoring import EpisodeRecord, benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.tests.support.program_module import load_program_module
from gymnasium import spaces
from pydantic import ValidationError

NAMES = [
    "robosuite/lift",
    "robosuite/stack",
    "robosuite/nut-assembly",
    "robosuite/nut-assembly-single",
    "robosuite/nut-assembly-square",
    "robosuite/nut-assembly-round",
    "robosuite/pick-place",
    "robosuite/pick-place-single",
    "robosuite/pick-place-milk",
    "robosuite/pick-place-bread",
    "robosuite/pick-place-cereal",
    "robosuite/pick-place-can",
    "robosuite/door",
    "robosuite/wipe",
    "robosuite/tool-hang",
    "robosuite/two-arm-lift",
    "robosuite/two-arm-peg-in-hole",
    "robosuite/two-arm-handover",
    "robosuite/two-arm-transport",
]

SIZES = {
    "Lift": (1, 7, 50, 10),
    "Stack": (1, 7, 50, 23),
    "NutAssembly": (1, 7, 50, 28),
    "NutAssemblySingle": (1, 7, 50, 15),
    "NutAssemblySquare": (1, 7, 50, 14),
    "NutAssemblyRound": (1, 7, 50, 14),
    "PickPlace": (1, 7, 50, 56),
    "PickPlaceSingle": (1, 7, 50, 15),
    "PickPlaceMilk": (1, 7, 50, 14),
    "PickPlaceBread": (1, 7, 50, 14),
    "PickPlaceCereal": (1, 7, 50, 14),
    "PickPlaceCan": (1, 7, 50, 14),
    "Door": (1, 7, 50, 14),
    "Wipe": (1, 6, 47, 8),
    "ToolHang": (1, 7, 50, 44),
    "TwoArmLift": (2, 14, 100, 19),
    "TwoArmPegInHole": (2, 12, 92, 17),
    "TwoArmHandover": (2, 14, 100, 16),
    "TwoArmTransport": (2, 14, 100, 41),
}
"""Robots, action size, proprioception size, object-state size per environment (the reference catalogue's)."""

_BY_NAME = {t.name: t for t in TASKS}

_WITHOUT_ROBOSUITE = """
import json, sys
sys.modules["robosuite"] = None  # as on the Host: find_spec and import both fail
from evoledger.benchmarks import robosuite_manipulation as family
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import MissingExtraError
try:
    default_registry().make("robosuite/lift")
except MissingExtraError as exc:
    error = str(exc)
benchmark = family.RobosuiteBenchmark(family.TASKS[0])  # the Host's side of a Benchmark
print(json.dumps({"names": list(family.BENCHMARKS), "error": error, "spec": benchmark.spec.id,
                  "heavy": sorted(m for m in ("robosuite", "mujoco") if sys.modules.get(m) is not None)}))
"""


def test_the_family_lists_and_builds_on_the_host_without_importing_robosuite(tmp_path: Path) -> None:
    no_venvs = {**os.environ, "EVOLEDGER_ENVS": str(tmp_path)}  # the family's venv, if installed here, is not found
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ROBOSUITE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=no_venvs,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["names"] == NAMES
    assert found["spec"] == "robosuite/lift"
    assert found["heavy"] == []
    assert "robosuite/lift" in found["error"]
    assert "evoledger env install robosuite" in found["error"]


def test_names_catalog_and_the_own_environment() -> None:
    assert list(BENCHMARKS) == NAMES == [t.name for t in TASKS]
    assert all(re.fullmatch(r"robosuite/[a-z0-9]+(-[a-z0-9]+)*", name) for name in NAMES)
    assert [e.name for e in CATALOG] == NAMES
    assert all(e.family == "robosuite" and e.extra == EXTRA for e in CATALOG)
    assert CATALOG[0].summary == "Lift: lift the cube off the table"
    assert EXTRA.name == "robosuite"
    assert EXTRA.modules == ("robosuite",)
    assert EXTRA.own_environment is not None
    assert EXTRA.own_environment.requirements == ("robosuite==1.5.2", "mujoco>=3.3.0,<3.4", "pynput<1.7")
    assert "numpy < 2" in EXTRA.own_environment.reason
    assert set(NAMES) <= set(default_registry().names())
    assert "robosuite" in default_registry().families()
    assert all(getattr(f, "config_model", None) is RobosuiteConfig for f in BENCHMARKS.values())


def test_the_table_has_the_catalogues_sizes() -> None:
    found = {t.env: (t.robots, t.actions, t.proprioception_size, t.objects_size) for t in TASKS}
    assert found == SIZES
    for task in TASKS:
        names = [name for name, _ in task.proprioception + task.objects]
        assert len(names) == len(set(names)), task.env
        assert task.grippers == (task.env not in ("Wipe", "TwoArmPegInHole"))


def test_spaces_and_spec_follow_the_table() -> None:
    benchmark = RobosuiteBenchmark(_BY_NAME["robosuite/two-arm-peg-in-hole"])
    observation = benchmark.observation_space
    assert isinstance(observation, spaces.Dict)
    assert {k: (v.shape, v.dtype) for k, v in observation.spaces.items()} == {
        "proprioception": ((92,), np.dtype(np.float64)),
        "objects": ((17,), np.dtype(np.float64)),
    }
    assert benchmark.action_space == spaces.Box(-1.0, 1.0, shape=(12,), dtype=np.float64)
    spec = benchmark.spec
    assert spec.environment_parameters == {
        "env": "TwoArmPegInHole",
        "robots": ["Panda", "Panda"],
        "controller": "BASIC (OSC_POSE arm, gripper)",
        "max_episode_steps": 500,
        "control_freq": 20,
    }
    assert spec.max_episode_steps == 500
    assert spec.scoring is not None
    assert spec.scoring.failure_return == 0.0
    fields = spec.metadata["proprioception_fields"]
    assert fields["robot0_eef_pos"] == [35, 38]
    assert fields["robot1_eef_pos"] == [81, 84]
    assert spec.metadata["object_fields"]["peg_to_hole"] == [7, 10]
    assert spec.metadata["grippers"] is False
    assert spec.metadata["requirements"] == ["robosuite==1.5.2", "mujoco>=3.3.0,<3.4", "pynput<1.7"]
    assert "Score (mean_return, maximize)" in spec.description
    assert "evoledger env install robosuite" in spec.description
    assert "(no gripper)" in spec.description
    lift = RobosuiteBenchmark(_BY_NAME["robosuite/lift"]).spec.metadata
    assert lift["object_fields"] == {"cube_pos": [0, 3], "cube_quat": [3, 7], "gripper_to_cube_pos": [7, 10]}
    shorter = RobosuiteBenchmark(_BY_NAME["robosuite/lift"], max_episode_steps=100)
    assert shorter.spec.parameters_digest != RobosuiteBenchmark(_BY_NAME["robosuite/lift"]).spec.parameters_digest
    wipe = RobosuiteBenchmark(_BY_NAME["robosuite/wipe"], max_episode_steps=300).spec
    assert wipe.scoring is not None
    assert wipe.scoring.failure_return == -300.0  # Wipe's penalties can make a running Episode's return negative
    for sparse in ("robosuite/tool-hang", "robosuite/two-arm-transport"):  # upstream's reward() has no shaped part
        spec = RobosuiteBenchmark(_BY_NAME[sparse]).spec
        assert spec.metadata["sparse_reward"] is True
        assert "Reward: sparse (1 per step of success)" in spec.description
        assert "mean sparse return" in spec.description
    assert "mean dense return" in RobosuiteBenchmark(_BY_NAME["robosuite/lift"]).spec.description


@pytest.mark.parametrize("steps", [0, 1001, 2.5])
def test_max_episode_steps_is_bounded(steps: object) -> None:
    with pytest.raises(ValidationError):
        RobosuiteConfig.model_validate({"max_episode_steps": steps})
    with pytest.raises(ValidationError, match="extra"):
        RobosuiteConfig.model_validate({"horizon": 10})
    assert RobosuiteConfig.model_validate({}).max_episode_steps == 500


def test_episodes_are_deterministic_and_distinct() -> None:
    benchmark = RobosuiteBenchmark(_BY_NAME["robosuite/stack"])
    first = benchmark.episodes("train", seed=4, count=5)
    assert first == benchmark.episodes("train", seed=4, count=5)
    assert len({e.seed for e in first}) == 5
    assert {e.seed for e in first}.isdisjoint(e.seed for e in benchmark.episodes("assessment", seed=4, count=5))


def _record(index: int, *, status: str = "ok", steps: int = 200, **metrics: float) -> EpisodeRecord:
    values = {"saturated_steps": 50.0, "abs_action_sum": 40.0, "eef_path": 0.5, "success": 0.0, **metrics}
    return EpisodeRecord(
        split="train",
        index=index,
        status=status,  # type: ignore[arg-type]
        episode_return=120.0 if status == "ok" else 0.0,
        steps=steps,
        terminated=False,
        truncated=status == "ok",
        metrics=values if status == "ok" else {},
        failure_message=None if status == "ok" else "Traceback ...\nKeyError: 'cube_pos'",
    )


def test_feedback_names_success_distances_and_scores_failures_as_zero() -> None:
    benchmark = RobosuiteBenchmark(_BY_NAME["robosuite/lift"], max_episode_steps=200)
    records = [
        _record(
            0,
            success=1.0,
            success_steps=150.0,
            first_success_step=44.0,
            final_gripper_to_cube_pos_distance=0.006,
            min_gripper_to_cube_pos_distance=0.005,
        ),
        _record(1, success_steps=0.0, final_gripper_to_cube_pos_distance=0.2, min_gripper_to_cube_pos_distance=0.2),
        _record(2, status="exception"),
    ]
    feedback = benchmark.feedback(records)
    content = feedback.content
    assert content["outcome_counts"] == {"not_succeeded": 1, "succeeded": 1}
    assert feedback.score == pytest.approx(240.0 / 3)  # the failed Episode counts 0
    assert content["notes"]["success"]["mean"] == 0.5  # the success rate of the Episodes that ran
    assert content["per_episode"]["0"]["notes"] == {
        "success": 1.0,
        "success_steps": 150.0,
        "success_at_end": 1.0,
        "first_success_step": 44.0,
        "saturated_fraction": 0.25,
        "mean_abs_action": 0.2,
        "eef_path": 0.5,
        "final_gripper_to_cube_pos_distance": 0.006,
        "min_gripper_to_cube_pos_distance": 0.005,
    }
    assert "first_success_step" not in content["per_episode"]["1"]["notes"]
    assert "KeyError: 'cube_pos'" in content["failure_messages"]["2"]
    assert "outcomes: not_succeeded 1, succeeded 1" in content["summary"]


def test_staged_reward_components_become_notes_where_upstream_has_them() -> None:
    assert stages(_BY_NAME["robosuite/stack"]) == ("reach", "lift", "stack")
    assert stages(_BY_NAME["robosuite/nut-assembly-round"]) == ("reach", "grasp", "lift", "hover")
    assert stages(_BY_NAME["robosuite/pick-place"]) == ("reach", "grasp", "lift", "hover")
    assert stages(_BY_NAME["robosuite/lift"]) == stages(_BY_NAME["robosuite/two-arm-lift"]) == ()
    stack = RobosuiteBenchmark(_BY_NAME["robosuite/stack"])
    record = _record(0, success_steps=0.0, max_reach_reward=0.4, max_lift_reward=1.5, max_stack_reward=0.0)
    notes = stack.episode_notes(record)
    assert (notes["max_reach_reward"], notes["max_lift_reward"], notes["max_stack_reward"]) == (0.4, 1.5, 0.0)
    assert "max_grasp_reward" not in notes
    assert stack.spec.metadata["reward_stages"] == ["reach", "lift", "stack"]


def test_every_shipped_program_acts_inside_the_action_space() -> None:
    """On random observations of each environment (the Programs run on numpy alone: no robosuite needed)."""
    programs_dir = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    rng = np.random.default_rng(0)
    for task in TASKS:
        benchmark = RobosuiteBenchmark(task)
        shipped = benchmark_programs(benchmark)
        assert shipped.baseline == programs_dir / "robosuite-baseline"
        family = HEURISTICS.get(task.env)
        assert shipped.heuristic == (None if family is None else programs_dir / f"{family}-heuristic")
        for program in filter(None, (shipped.baseline, shipped.heuristic)):
            context = SimpleNamespace(
                observation_space=benchmark.observation_space,
                action_space=benchmark.action_space,
                metadata=dict(benchmark.spec.metadata),
                environment_parameters=dict(benchmark.spec.environment_parameters),
                policy_seed=1,
            )
            policy: Any = load_program_module(program).make_policy(context)
            for _ in range(30):
                observation = {k: rng.normal(size=box.shape) for k, box in benchmark.observation_space.spaces.items()}
                action = np.asarray(policy.act(observation))
                assert action.shape == (task.actions,), (task.name, program.name)
                assert all(math.isfinite(v) and -1.0 <= v <= 1.0 for v in action.tolist()), (task.name, program)
    assert sorted(HEURISTICS) == [
        "Door",
        "Lift",
        "NutAssembly",
        "NutAssemblyRound",
        "NutAssemblySingle",
        "NutAssemblySquare",
        "PickPlace",
        "PickPlaceBread",
        "PickPlaceCan",
        "PickPlaceCereal",
        "PickPlaceMilk",
        "PickPlaceSingle",
        "Stack",
        "TwoArmHandover",
        "TwoArmLift",
        "TwoArmPegInHole",
        "TwoArmTransport",
        "Wipe",
    ]
