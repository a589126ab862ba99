"""The DeepMind Control Suite family on the Host side: names, the missing-environment error, spaces, spec, score
rule, Feedback words and the shipped Programs, all without ``dm_control`` (the family runs in a venv of its own).

The checks that need the real environments run inside that venv: ``test_dm_control_venv.py``.
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
from evoledger.benchmarks.dm_control_suite import (
    BENCHMARKS,
    CATALOG,
    EXTRA,
    HEURISTICS,
    TASKS,
    DmControlBenchmark,
    DmControlConfig,
)
from evoledger.benchmarks.dm_control_tasks import METRICS
from evoledger.kernel.authoring import EpisodeRecord, benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.tests.support.program_module import load_program_module
from gymnasium import spaces
from pydantic import ValidationError

NAMES = [
    "dm-control/acrobot-swingup",
    "dm-control/acrobot-swingup-sparse",
    "dm-control/ball-in-cup-catch",
    "dm-control/cartpole-balance",
    "dm-control/cartpole-balance-sparse",
    "dm-control/cartpole-swingup",
    "dm-control/cartpole-swingup-sparse",
    "dm-control/cheetah-run",
    "dm-control/finger-spin",
    "dm-control/finger-turn-easy",
    "dm-control/finger-turn-hard",
    "dm-control/fish-upright",
    "dm-control/fish-swim",
    "dm-control/hopper-stand",
    "dm-control/hopper-hop",
    "dm-control/humanoid-stand",
    "dm-control/humanoid-walk",
    "dm-control/humanoid-run",
    "dm-control/manipulator-bring-ball",
    "dm-control/pendulum-swingup",
    "dm-control/point-mass-easy",
    "dm-control/reacher-easy",
    "dm-control/reacher-hard",
    "dm-control/swimmer-swimmer6",
    "dm-control/swimmer-swimmer15",
    "dm-control/walker-stand",
    "dm-control/walker-walk",
    "dm-control/walker-run",
]
"""``suite.BENCHMARKING`` in its order, kebab-cased."""

_BY_NAME = {t.name: t for t in TASKS}

_WITHOUT_DM_CONTROL = """
import json, sys
sys.modules["dm_control"] = None  # as on the Host: find_spec and import both fail
from evoledger.benchmarks import dm_control_suite as family
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import MissingExtraError
try:
    default_registry().make("dm-control/cartpole-swingup")
except MissingExtraError as exc:
    error = str(exc)
benchmark = family.DmControlBenchmark(family.TASKS[5])  # the Host's side of a Benchmark, as a worker's Host builds it
print(json.dumps({"names": list(family.BENCHMARKS), "error": error, "spec": benchmark.spec.id,
                  "heavy": sorted(m for m in ("dm_control", "mujoco") if sys.modules.get(m) is not None)}))
"""


def test_the_family_lists_and_builds_on_the_host_without_importing_dm_control(tmp_path: Path) -> None:
    no_venvs = {**os.environ, "EVOLEDGER_ENVS": str(tmp_path)}  # the family's venv, if installed here, is not found
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_DM_CONTROL],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=no_venvs,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["names"] == NAMES
    assert found["spec"] == "dm-control/cartpole-swingup"
    assert found["heavy"] == []
    assert "dm-control/cartpole-swingup" in found["error"]
    assert "evoledger env install dm-control" in found["error"]
    assert "'dm-control'" in found["error"]  # the family's name: `evoledger env install dm-control` installs it


def test_names_catalog_and_the_own_environment() -> None:
    assert list(BENCHMARKS) == NAMES == [t.name for t in TASKS]
    assert all(re.fullmatch(r"dm-control/[a-z0-9]+(-[a-z0-9]+)*", name) for name in NAMES)
    assert [e.name for e in CATALOG] == NAMES
    assert all(e.family == "dm-control" and e.extra == EXTRA for e in CATALOG)
    assert CATALOG[2].summary.startswith("ball_in_cup/catch: ")
    assert EXTRA.name == "dm-control"
    assert EXTRA.modules == ("dm_control",)
    assert EXTRA.own_environment is not None
    assert EXTRA.own_environment.requirements == ("dm-control==1.0.50", "mujoco>=3.2,<4")
    assert "MuJoCo 4" in EXTRA.own_environment.reason
    assert set(NAMES) <= set(default_registry().names())
    assert "dm-control" in default_registry().families()
    assert all(getattr(f, "config_model", None) is DmControlConfig for f in BENCHMARKS.values())


def test_spaces_and_spec_follow_the_table() -> None:
    benchmark = DmControlBenchmark(_BY_NAME["dm-control/manipulator-bring-ball"])
    observation = benchmark.observation_space
    assert isinstance(observation, spaces.Dict)
    assert {k: v.shape for k, v in observation.spaces.items()} == {
        "arm_pos": (8, 2),
        "arm_vel": (8,),
        "touch": (5,),
        "hand_pos": (4,),
        "object_pos": (4,),
        "object_vel": (3,),
        "target_pos": (4,),
    }
    assert all(isinstance(b, spaces.Box) and b.dtype == np.float64 for b in observation.spaces.values())
    assert benchmark.action_space == spaces.Box(-1.0, 1.0, shape=(5,), dtype=np.float64)
    spec = benchmark.spec
    assert spec.environment_parameters == {
        "domain": "manipulator",
        "task": "bring_ball",
        "max_episode_steps": 1000,
        "control_timestep": 0.01,
    }
    assert spec.max_episode_steps == 1000
    assert spec.scoring is not None
    assert spec.scoring.failure_return == 0.0
    assert spec.metadata["requirements"] == ["dm-control==1.0.50", "mujoco>=3.2,<4"]
    assert spec.metadata["step_metrics"] == {"ball_to_target": METRICS["ball_to_target"]}
    assert "arm_pos [8, 2]" in spec.description
    assert "Score (mean_return, maximize)" in spec.description
    assert "evoledger env install dm-control" in spec.description
    scalar = DmControlBenchmark(_BY_NAME["dm-control/walker-walk"]).observation_space.spaces["height"]
    assert scalar.shape == ()
    shorter = DmControlBenchmark(_BY_NAME["dm-control/manipulator-bring-ball"], max_episode_steps=100)
    assert shorter.spec.parameters_digest != spec.parameters_digest
    for task in TASKS:
        assert task.actions >= 1
        assert set(task.metrics) <= set(METRICS), task.name


@pytest.mark.parametrize("steps", [0, 1001, 2.5])
def test_max_episode_steps_is_bounded_by_the_suites_limit(steps: object) -> None:
    with pytest.raises(ValidationError):
        DmControlConfig.model_validate({"max_episode_steps": steps})
    with pytest.raises(ValidationError, match="extra"):
        DmControlConfig.model_validate({"max_steps": 10})
    assert DmControlConfig.model_validate({"max_episode_steps": 1000}).max_episode_steps == 1000


def test_episodes_are_deterministic_and_distinct() -> None:
    benchmark = DmControlBenchmark(_BY_NAME["dm-control/cheetah-run"])
    first = benchmark.episodes("train", seed=4, count=5)
    assert first == benchmark.episodes("train", seed=4, count=5)
    assert len({e.seed for e in first}) == 5
    assert {e.seed for e in first}.isdisjoint(e.seed for e in benchmark.episodes("assessment", seed=4, count=5))


def _record(index: int, recent: float, *, status: str = "ok", steps: int = 1000, **metrics: float) -> EpisodeRecord:
    values = {
        "recent_reward": recent,
        "rewarded_steps": 400.0,
        "saturated_steps": 100.0,
        "abs_action_sum": 250.0,
        **metrics,
    }
    return EpisodeRecord(
        split="train",
        index=index,
        status=status,  # type: ignore[arg-type]
        episode_return=500.0 if status == "ok" else 0.0,
        steps=steps,
        terminated=False,
        truncated=status == "ok",
        metrics=values if status == "ok" else {},
        failure_message=None if status == "ok" else "Traceback ...\nValueError: bad gain",
    )


def test_feedback_names_outcomes_notes_and_scores_failures_as_zero() -> None:
    benchmark = DmControlBenchmark(_BY_NAME["dm-control/cartpole-swingup"])
    records = [
        _record(0, 0.95, pole_cos=0.99, cart_position=0.1, first_rewarded_step=150.0),
        _record(1, 0.5, pole_cos=0.4, cart_position=-0.3),
        _record(2, 0.01, pole_cos=-1.0, cart_position=0.0),
        _record(3, 0.0, status="exception"),
    ]
    feedback = benchmark.feedback(records)
    content = feedback.content
    assert content["outcome_counts"] == {"partly_solved": 1, "solved": 1, "unsolved": 1}
    assert feedback.score == pytest.approx(1500.0 / 4)  # the failed Episode counts 0
    assert content["status_counts"] == {"exception": 1, "ok": 3}
    notes = content["per_episode"]["0"]["notes"]
    assert notes == {
        "final_window_reward": 0.95,
        "rewarded_fraction": 0.4,
        "saturated_fraction": 0.1,
        "mean_abs_action": 0.25,
        "first_rewarded_step": 150.0,
        "final_pole_cos": 0.99,
        "final_cart_position": 0.1,
    }
    assert "first_rewarded_step" not in content["per_episode"]["1"]["notes"]
    assert "ValueError: bad gain" in content["failure_messages"]["3"]
    assert "outcomes: partly_solved 1, solved 1, unsolved 1" in content["summary"]
    assert {a.name for a in feedback.artifacts} == {"episodes.csv"}  # no trajectories here: no trace


def test_every_shipped_program_acts_inside_the_action_space() -> None:
    """On random observations of each task (the Programs run on numpy alone, so this needs no dm_control)."""
    programs_dir = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    rng = np.random.default_rng(0)
    for task in TASKS:
        benchmark = DmControlBenchmark(task)
        shipped = benchmark_programs(benchmark)
        assert shipped.baseline == programs_dir / "dm-control-baseline"
        family = HEURISTICS.get(task.profile)
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
            for _ in range(20):
                observation = {
                    k: rng.normal(size=box.shape).astype(np.float64)
                    for k, box in benchmark.observation_space.spaces.items()
                }
                action = np.asarray(policy.act(observation))
                assert action.shape == (task.actions,), (task.name, program.name)
                assert all(math.isfinite(v) and -1.0 <= v <= 1.0 for v in action.tolist()), (task.name, program)
    assert set(HEURISTICS) <= {task.profile for task in TASKS}  # keyed by task, every key a real one
    assert len(HEURISTICS) == 22
