"""The Gymnasium-Robotics family: listing without the extra, the mujoco 4 repair, the score rule, Feedback words, and
real Episodes through ``evaluate()``.

Kept cheap for the default suite; every profile's conformance and heuristic-beats-baseline run under ``pytest -m
catalog`` (test_conformance.py, test_programs_through_evaluate.py), and a built-in-Agent Run per profile with
``replay --execute`` in ``test_robotics_catalog.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.robotics import BENCHMARKS, CATALOG, EXTRA, HEURISTICS, TASKS, RoboticsBenchmark
from evoledger.kernel.authoring import EpisodeRecord, benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

pytestmark = pytest.mark.skipif(not EXTRA.installed, reason="needs the extra: pip install 'evoledger[robotics]'")

NAMES = [
    "robotics/fetch-reach",
    "robotics/fetch-push",
    "robotics/fetch-slide",
    "robotics/fetch-pick-and-place",
    "robotics/point-maze-umaze",
    "robotics/ant-maze-umaze",
    "robotics/adroit-door",
    "robotics/adroit-hammer",
    "robotics/adroit-pen",
    "robotics/adroit-relocate",
    "robotics/hand-reach",
    "robotics/hand-manipulate-block",
    "robotics/hand-manipulate-egg",
    "robotics/hand-manipulate-pen",
    "robotics/hand-manipulate-block-boolean-touch",
    "robotics/hand-manipulate-egg-boolean-touch",
    "robotics/hand-manipulate-pen-boolean-touch",
    "robotics/hand-manipulate-block-continuous-touch",
    "robotics/hand-manipulate-egg-continuous-touch",
    "robotics/hand-manipulate-pen-continuous-touch",
    "robotics/franka-kitchen",
]

_WITHOUT_ROBOTICS = """
import json, sys
sys.modules["gymnasium_robotics"] = None  # as if the extra were not installed: find_spec and import both fail
from evoledger.benchmarks import robotics as family
from evoledger.ledger.errors import MissingExtraError
try:
    family.BENCHMARKS["robotics/fetch-reach"]()
except MissingExtraError as exc:
    error = str(exc)
print(json.dumps({"names": list(family.BENCHMARKS), "catalog": [e.name for e in family.CATALOG], "error": error,
                  "imported": sys.modules.get("gymnasium_robotics") is not None}))
"""


def test_the_family_lists_every_profile_without_gymnasium_robotics_and_says_how_to_install_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ROBOTICS], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listing = json.loads(done.stdout)
    assert listing["names"] == listing["catalog"] == NAMES
    assert "pip install 'evoledger[robotics]'" in listing["error"]
    assert "robotics/fetch-reach" in listing["error"]
    assert "\n" not in listing["error"].strip()
    assert listing["imported"] is False


def test_catalog_rows_programs_and_score_kinds() -> None:
    assert list(BENCHMARKS) == [t.name for t in TASKS] == [e.name for e in CATALOG] == NAMES
    assert all(e.family == "robotics" and e.extra == EXTRA for e in CATALOG)
    assert set(NAMES) <= set(default_registry().names())
    programs = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    assert (programs / "robotics-baseline" / "policy.py").is_file()
    for task, folder in HEURISTICS.items():
        assert f"robotics/{task}" in NAMES
        assert (programs / folder / "policy.py").is_file()
    kinds = {t.task: (t.score_kind, t.failure_return) for t in TASKS}
    assert kinds["fetch-push"] == kinds["point-maze-umaze"] == kinds["hand-manipulate-pen"] == ("success", 0.0)
    assert kinds["adroit-door"] == ("return", -1_000_000.0)
    assert kinds["franka-kitchen"] == ("tasks", -1.0)


_STEPS = """
import hashlib, sys, warnings
warnings.simplefilter("ignore")
import gymnasium as gym, gymnasium_robotics, numpy as np
gym.register_envs(gymnasium_robotics)
if sys.argv[1] == "repaired":
    from evoledger.benchmarks.robotics_mujoco4 import repair_joint_helpers
    repair_joint_helpers()
digest = hashlib.sha256()
env = gym.make("FetchPickAndPlace-v4")  # a free joint (the block) and slide and hinge joints (the arm)
observation, _ = env.reset(seed=7)
rng = np.random.default_rng(0)
for _ in range(20):
    observation, reward, *_ = env.step(rng.uniform(-1, 1, 4))
    for key in sorted(observation):
        digest.update(np.asarray(observation[key], dtype=np.float64).tobytes())
    digest.update(np.float64(reward).tobytes())
print(digest.hexdigest())
"""


def test_the_mujoco4_repair_changes_nothing_but_upstreams_failing_assertion() -> None:
    """``python -O`` drops upstream's assertions: the repaired helpers must give the very same trajectory."""

    def steps(*flags: str) -> str:
        done = subprocess.run(
            [sys.executable, *flags, "-c", _STEPS, "repaired" if not flags else "upstream"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert steps() == steps("-O")


def _record(**metrics: float) -> EpisodeRecord:
    return EpisodeRecord(
        split="train", index=0, status="ok", episode_return=0.0, steps=50, terminated=False, truncated=True,
        metrics=metrics,
    )  # fmt: skip


def test_success_at_the_end_scores_and_a_lost_success_is_named() -> None:
    benchmark = default_registry().make("robotics/fetch-reach", {"max_episode_steps": 5})
    assert isinstance(benchmark, RoboticsBenchmark)
    assert benchmark.outcome(_record(success=1.0, success_steps=3.0)) == "succeeded"
    assert benchmark.outcome(_record(success=0.0, success_steps=3.0)) == "lost_success"
    assert benchmark.outcome(_record(success=0.0, success_steps=0.0)) == "never_succeeded"
    episode = benchmark.episodes("train", seed=1, count=1)[0]
    env = benchmark.make_environment(episode)
    try:
        observation = env.reset()
        assert set(observation) == {"observation", "achieved_goal", "desired_goal"}
        rewards, steps = [], []
        done = False
        while not done:
            gripper, target = observation["observation"][:3], observation["desired_goal"]
            move = [max(-1.0, min(1.0, 10.0 * (float(t) - float(g)))) for g, t in zip(gripper, target, strict=True)]
            step = env.step([*move, 0.0])
            observation, done = step.observation, step.terminated or step.truncated
            rewards.append(step.reward)
            steps.append(step.metrics)
    finally:
        env.close()
    assert rewards[:-1] == [0.0] * 4  # only the last step is scored
    assert rewards[-1] == 1.0 == steps[-1]["success"]
    assert steps[-1]["goal_distance"] < 0.05 < steps[0]["goal_distance"] + 0.05
    assert steps[-1]["upstream_reward"] == 0.0  # upstream's sparse reward: 0 at the goal, -1 elsewhere
    assert steps[0]["upstream_reward"] == -1.0


def test_the_maze_map_is_public_and_settings_are_checked() -> None:
    spec = default_registry().make("robotics/point-maze-umaze").spec
    assert spec.environment_parameters["maze_map"][2] == [1, 1, 1, 0, 1]
    assert spec.environment_parameters["maze_size_scaling"] == 1.0
    assert spec.max_episode_steps == 300
    assert spec.metadata["score_kind"] == "success"
    assert "Episodes the Policy failed count as 0" in spec.description
    with pytest.raises(Exception, match="max_episode_steps"):
        default_registry().make("robotics/point-maze-umaze", {"max_episode_steps": 0})


def test_the_heuristics_beat_the_zero_action_through_evaluate(tmp_path: Path) -> None:
    name = "robotics/fetch-reach"
    programs = benchmark_programs(default_registry().make(name))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=2, seed=3)
    with LocalExecutor(BenchmarkRef(name=name)) as executor:
        baseline = evaluate(programs.baseline, name, config=config, executor=executor, record_to=tmp_path / "b")
        heuristic = evaluate(programs.heuristic, name, config=config, executor=executor)
    assert (baseline.score, heuristic.score) == (0.0, 1.0)
    content: dict[str, Any] = dict(baseline.feedback_content)
    assert content["outcome_counts"] == {"never_succeeded": 2}
    notes = content["per_episode"]["0"]["notes"]
    assert notes["succeeded"] == 0.0
    assert notes["action_saturation"] == 0.0
    assert notes["upstream_return"] == -50.0
    assert notes["final_goal_distance"] > 0.05
    assert heuristic.feedback_content["outcome_counts"] == {"succeeded": 2}


def test_the_kitchen_counts_completed_tasks() -> None:
    benchmark = default_registry().make("robotics/franka-kitchen", {"max_episode_steps": 3})
    assert isinstance(benchmark, RoboticsBenchmark)
    env = benchmark.make_environment(benchmark.episodes("train", seed=1, count=1)[0])
    try:
        observation = env.reset()
        assert set(observation["desired_goal"]) == {
            "bottom burner", "hinge cabinet", "kettle", "light switch", "microwave", "slide cabinet", "top burner",
        }  # fmt: skip
        step = env.step([0.0] * 9)
    finally:
        env.close()
    assert step.metrics["tasks_completed"] == 0.0
    assert step.metrics["done_microwave"] == 0.0
    record = EpisodeRecord(
        split="train", index=0, status="ok", episode_return=0.0, steps=1, terminated=False, truncated=True,
        metrics=step.metrics,
    )  # fmt: skip
    assert benchmark.outcome(record) == "no_task_done"
    assert benchmark.episode_notes(record)["tasks_completed"] == 0.0
