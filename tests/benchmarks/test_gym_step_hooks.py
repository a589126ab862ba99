"""GymBenchmark's simulation hooks: ``start_episode`` at reset and ``simulation_metrics`` after each step see the
unwrapped environment, the step's ``info``, both forms of the action and per-Episode totals (GymStep)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymStep, GymTask
from evoledger.kernel.authoring import InvalidAction


class _Recording(GymBenchmark):
    """Pendulum with metrics read from the simulation: the unwrapped state, a step count kept in the totals."""

    def __init__(self) -> None:
        super().__init__(
            GymTask(
                benchmark_id="test/pendulum-hooks",
                gymnasium_id="Pendulum-v1",
                description="Pendulum-v1 with simulation metrics (a test Benchmark).",
                primary_metric="mean_return",
                score_rule="mean return",
                failure_return=-2000.0,
                max_episode_steps=5,
            )
        )
        self.starts: list[tuple[str, dict[str, Any]]] = []
        self.steps: list[GymStep] = []

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        self.starts.append((type(env).__name__, dict(totals)))
        totals["count"] = 0

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        self.steps.append(step)
        step.totals["count"] += 1
        theta, _ = step.env.state  # the unwrapped environment's own state, after the step
        return {"count": float(step.totals["count"]), "theta": float(theta), "rewarded": float(step.reward)}


def test_the_hooks_see_the_unwrapped_env_the_actions_and_totals_that_last_one_episode() -> None:
    bench = _Recording()
    env = bench.make_environment(bench.episodes("train", seed=1, count=1)[0])
    env.reset()
    first = env.step([0.5])
    second = env.step(np.array([-1.0], dtype=np.float64))
    assert bench.starts == [("PendulumEnv", {})]
    assert [s.metrics["count"] for s in (first, second)] == [1.0, 2.0]
    assert first.metrics["rewarded"] == first.reward
    assert first.metrics["theta"] != second.metrics["theta"]
    recorded = bench.steps[0]
    assert recorded.action == [0.5]  # as the Policy sent it
    assert isinstance(recorded.env_action, np.ndarray)  # as the environment received it
    assert recorded.env_action.dtype == np.float32
    assert isinstance(recorded.info, Mapping)
    assert recorded.observation is first.observation
    with pytest.raises(InvalidAction):
        env.step([5.0])  # out of bounds: rejected before the environment, so the hook never sees it
    assert len(bench.steps) == 2
    env.reset()  # a new Episode starts with empty totals
    assert bench.starts[-1] == ("PendulumEnv", {})
    assert env.step([0.0]).metrics["count"] == 1.0
    env.close()


def test_by_default_the_step_metrics_hook_gives_the_metrics() -> None:
    class _Plain(_Recording):
        def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
            return None

        def simulation_metrics(self, step: GymStep) -> dict[str, float]:
            return GymBenchmark.simulation_metrics(self, step)

        def step_metrics(self, observation: Any, reward: float, terminated: bool, truncated: bool) -> dict[str, float]:
            return {"reward_again": reward}

    bench = _Plain()
    env = bench.make_environment(bench.episodes("train", seed=1, count=1)[0])
    env.reset()
    step = env.step([0.0])
    assert step.metrics == {"reward_again": step.reward}
    env.close()
