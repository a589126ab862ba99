"""The highway/* Benchmarks (highway-env): catalogue, explicit config, strict actions, outcomes, Feedback.

The default run builds three of the fast tasks and plays short Episodes in-process plus one through the real
evaluate(); everything longer (every task's heuristic against its baseline, conformance, determinism across
processes, a built-in-Agent Run per task) is marked ``catalog``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks import highway
from evoledger.kernel.authoring import InvalidAction, benchmark_programs, check_benchmark, parameters_digest
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

pytest.importorskip("highway_env")

TASKS = {t.name: t for t in highway.TASKS}


def test_the_module_imports_and_lists_every_task_without_highway_env() -> None:
    code = (
        "import sys; sys.modules['highway_env'] = None\n"
        "from evoledger.benchmarks import highway\n"
        "from evoledger.ledger.errors import MissingExtraError\n"
        "print(sorted(highway.BENCHMARKS) == sorted(e.name for e in highway.CATALOG))\n"
        "print(len(highway.BENCHMARKS))\n"
        "print('highway_env' in sys.modules and sys.modules['highway_env'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["True", "10", "False"]
    assert [e.name for e in highway.CATALOG] == list(highway.BENCHMARKS)
    assert {e.family for e in highway.CATALOG} == {"highway"}
    assert all(e.extra == highway.EXTRA for e in highway.CATALOG)


@pytest.mark.parametrize("name", ["highway/two-way", "highway/lane-keeping", "highway/parking"])
def test_spec_states_the_explicit_config_steps_and_failure_return(name: str) -> None:
    task = TASKS[name]
    spec = default_registry().make(name).spec
    parameters = spec.environment_parameters
    assert parameters["gymnasium_id"] == task.env_id
    assert spec.max_episode_steps == task.steps == parameters["max_episode_steps"]
    config = parameters["config"]
    assert config["observation"]["type"]
    assert config["action"]["type"]
    assert not set(config) & {"screen_width", "offscreen_rendering", "render_agent"}
    assert spec.parameters_digest == parameters_digest(parameters)
    assert spec.metadata["failure_return"] == -task.steps
    assert spec.scoring is not None
    assert spec.scoring.failure_return == -task.steps
    assert f"count as {-task.steps}" in spec.description
    shorter = default_registry().make(name, {"max_episode_steps": 3}).spec
    assert shorter.parameters_digest != spec.parameters_digest
    assert shorter.scoring is not None
    assert shorter.scoring.failure_return == -3


def test_parking_observation_is_a_dict_and_actions_are_checked_not_clipped() -> None:
    bench = default_registry().make("highway/parking", {"max_episode_steps": 3})
    env = bench.make_environment(bench.episodes("train", seed=1, count=1)[0])
    observation = env.reset()
    assert set(observation) == {"observation", "achieved_goal", "desired_goal"}
    assert bench.observation_space.contains(observation)
    with pytest.raises(InvalidAction, match="outside the bounds"):
        env.step([1.5, 0.0])
    with pytest.raises(InvalidAction, match="shape"):
        env.step([0.0])
    step = env.step(np.zeros(2, dtype=np.float32))
    assert {"speed", "crashed", "goal", "lane_changes", "mean_abs_steering"} <= set(step.metrics)
    env.close()


def test_the_same_seed_replays_the_same_trajectory_and_another_seed_differs() -> None:
    bench = default_registry().make("highway/two-way", {"max_episode_steps": 4})

    def observations(seed: int) -> list[Any]:
        env = bench.make_environment(bench.episodes("train", seed=seed, count=1)[0])
        seen = [env.reset().tolist()]
        for _ in range(4):
            step = env.step(3)
            seen.append(step.observation.tolist())
            if step.terminated or step.truncated:
                break
        env.close()
        return seen

    assert observations(5) == observations(5)
    assert observations(5) != observations(6)


def test_feedback_reports_outcomes_speed_and_lane_changes(play_program: Any) -> None:
    bench = default_registry().make("highway/two-way")
    programs = benchmark_programs(bench)
    records = play_program(bench, programs.baseline, count=2)
    feedback = bench.feedback(records)
    content = feedback.content
    assert content["outcome_counts"] == {"crashed": 2}  # idling behind a slower car ends in a crash
    assert set(content["notes"]) >= {"mean_speed", "lane_changes", "crash_step"}
    assert feedback.score == pytest.approx(np.mean([r.episode_return for r in records]), abs=1e-6)
    assert programs.heuristic is not None
    heuristic = bench.feedback(play_program(bench, programs.heuristic, count=2))
    assert heuristic.score is not None
    assert feedback.score is not None
    assert heuristic.score > feedback.score


def test_one_baseline_episode_runs_through_the_real_evaluate() -> None:
    ref = BenchmarkRef(name="highway/lane-keeping", config={"max_episode_steps": 5})
    bench = default_registry().make(ref.name, ref.config)
    result = evaluate(benchmark_programs(bench).baseline, ref, config=EvaluationConfig(episodes=1, seed=0))
    assert result.failures == 0
    assert result.episodes[0].steps == 5
    assert result.episodes[0].trajectory_digest
    assert result.feedback_content["outcome_counts"] == {"timed_out": 1}


# --- catalog: every task, longer ------------------------------------------------------------------------------

EPISODES = {"highway/parking": 4, "highway/racetrack": 4, "highway/intersection": 16}
STEPS = {"highway/racetrack": 300}


@pytest.mark.catalog
@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_heuristic_beats_the_neutral_baseline_through_evaluate(name: str) -> None:
    ref = BenchmarkRef(name=name, config={"max_episode_steps": STEPS[name]} if name in STEPS else {})
    programs = benchmark_programs(default_registry().make(ref.name, ref.config))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=EPISODES.get(name, 8), seed=3)
    with LocalExecutor(ref) as executor:
        baseline = evaluate(programs.baseline, ref, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, ref, config=config, executor=executor)
    assert heuristic.failures == 0
    assert baseline.failures == 0
    assert baseline.score is not None
    assert heuristic.score is not None
    print(f"{name}: baseline {baseline.score} heuristic {heuristic.score} ({config.episodes} Episodes, seed 3)")
    assert heuristic.score > baseline.score, (name, heuristic.score, baseline.score)


@pytest.mark.catalog
@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_passes_conformance(name: str) -> None:
    check_benchmark(default_registry().make(name, {"max_episode_steps": 4}), episodes=2).raise_for_problems()


@pytest.mark.catalog
@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_explicit_config_behaves_as_the_upstream_defaults(name: str) -> None:
    import gymnasium as gym

    bench = default_registry().make(name, {"max_episode_steps": 6})
    upstream = gym.make(TASKS[name].env_id, max_episode_steps=6, disable_env_checker=True)
    episode = bench.episodes("train", seed=2, count=1)[0]
    ours = bench.make_environment(episode)
    action = 1 if isinstance(bench.action_space, gym.spaces.Discrete) else np.zeros(bench.action_space.shape, "f4")
    theirs_obs, _ = upstream.reset(seed=episode.seed)
    assert json.dumps(_plain(ours.reset())) == json.dumps(_plain(theirs_obs))
    for _ in range(6):
        step = ours.step(action)
        theirs = upstream.step(action)
        assert json.dumps(_plain(step.observation)) == json.dumps(_plain(theirs[0]))
        assert step.reward == float(theirs[1])
        if step.terminated or step.truncated:
            break
    ours.close()
    upstream.close()


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    return np.asarray(value).tolist()


@pytest.mark.catalog
def test_evaluate_twice_in_fresh_processes_gives_the_same_trajectory_digests() -> None:
    ref = BenchmarkRef(name="highway/highway", config={"max_episode_steps": 10})
    program = benchmark_programs(default_registry().make(ref.name, ref.config)).heuristic
    assert program is not None
    config = EvaluationConfig(episodes=2, seed=11)
    first = evaluate(program, ref, config=config)
    second = evaluate(program, ref, config=config)
    assert [e.trajectory_digest for e in first.episodes] == [e.trajectory_digest for e in second.episodes]


@pytest.mark.catalog
@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_builtin_agent_completes_a_run(name: str, tmp_path: Path) -> None:
    steps = {"highway/parking": 40, "highway/racetrack": 40, "highway/lane-keeping": 40}.get(name)
    command = [sys.executable, "-m", "evoledger", "run", name, "--agent", "hill-climb", "--episode-budget", "6"]
    command += ["--max-episodes-per-submission", "2", "--validation-episodes", "1", "--assessment-episodes", "2"]
    command += ["--max-candidates", "1", "--isolation", "local", "--agent-isolation", "local", "--json"]
    command += ["--record-to", str(tmp_path / "run")] + (["--set", f"max_episode_steps={steps}"] if steps else [])
    out = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    replay = subprocess.run(
        [sys.executable, "-m", "evoledger", "replay", str(tmp_path / "run"), "--execute", "--isolation", "local"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert replay.returncode == 0, replay.stdout[-3000:]
