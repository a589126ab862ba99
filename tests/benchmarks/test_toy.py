"""The toy Benchmarks: registered, deterministic, strict about actions, and scored as documented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.toy import ToyBenchmark, make_toy_continuous, make_toy_counter, make_toy_structured
from evoledger.kernel.authoring import SPLITS, Benchmark, EpisodeRecord, InvalidAction, parameters_digest
from evoledger.kernel.registry import BenchmarkRef, default_registry, resolve_benchmark
from evoledger.ledger.errors import ConfigError, InputError


@pytest.mark.parametrize("name", ["toy-counter", "toy-continuous", "toy-structured"])
def test_toy_benchmarks_are_registered_and_conform(name: str) -> None:
    benchmark = resolve_benchmark(BenchmarkRef(name=name))
    assert isinstance(benchmark, Benchmark)
    spec = benchmark.spec
    assert spec.id == name
    assert spec.parameters_digest == parameters_digest(spec.environment_parameters)
    assert benchmark.episodes("train", seed=1, count=4) == benchmark.episodes("train", seed=1, count=4)
    seeds = {e.seed for split in SPLITS for e in benchmark.episodes(split, seed=1, count=4)}
    assert len(seeds) == 4 * len(SPLITS)  # splits never share a seed
    episode = benchmark.episodes("train", seed=1, count=1)[0]
    first = benchmark.make_environment(episode).reset()
    again = benchmark.make_environment(episode).reset()
    assert repr(first) == repr(again)
    assert benchmark.observation_space.contains(first)


def test_counter_rewards_a_hit_and_terminates() -> None:
    benchmark = make_toy_counter(n_actions=4, max_episode_steps=4)
    episode = benchmark.episodes(SPLITS[-1], seed=5, count=1)[0]
    rewards = []
    for guess in range(4):
        env = benchmark.make_environment(episode)
        env.reset()
        step = env.step(guess)
        rewards.append(step.reward)
        assert step.observation.dtype == np.float32
        if step.reward:
            assert step.terminated
            assert step.metrics["distance"] == 0.0
    assert sorted(rewards) == [0.0, 0.0, 0.0, 1.0]


def test_counter_truncates_at_the_step_limit() -> None:
    benchmark = make_toy_counter(max_episode_steps=3, terminate_on_hit=False)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    steps = [env.step(0) for _ in range(3)]
    assert [s.truncated for s in steps] == [False, False, True]
    with pytest.raises(RuntimeError, match="after the Episode ended"):
        env.step(0)


@pytest.mark.parametrize(
    ("factory", "action"),
    [
        (make_toy_counter, 8),
        (make_toy_counter, -1),
        (make_toy_counter, 1.5),
        (make_toy_counter, "1"),
        (make_toy_continuous, np.array([np.nan, 0.0], dtype=np.float32)),
        (make_toy_continuous, np.array([2.0, 0.0], dtype=np.float32)),
        (make_toy_continuous, np.array([0.0], dtype=np.float32)),
        (make_toy_structured, 4),
    ],
)
def test_actions_outside_the_space_are_invalid(factory: Callable[..., ToyBenchmark], action: Any) -> None:
    benchmark = factory()
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    with pytest.raises(InvalidAction):
        env.step(action)


def test_test_hooks_fail_where_asked() -> None:
    benchmark = make_toy_counter(fail_on_step=2, terminate_on_hit=False)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    env.step(0)
    with pytest.raises(RuntimeError, match="fail on step 2"):
        env.step(0)
    with pytest.raises(RuntimeError, match="fail on reset"):
        make_toy_counter(fail_on_reset=True).make_environment(benchmark.episodes("train", seed=0, count=1)[0]).reset()


def test_feedback_counts_failures_as_zero_and_ignores_infra_faults() -> None:
    benchmark = make_toy_counter()
    records = [
        EpisodeRecord("train", 0, "ok", 1.0, 2, True, False),
        EpisodeRecord("train", 1, "timeout", 0.5, 1, False, False),
        EpisodeRecord("train", 2, "infra_fault", 0.0, 0, False, False),
    ]
    feedback = benchmark.feedback(records)
    assert feedback.score == 0.5
    assert feedback.content["statuses"] == {"infra_fault": 1, "ok": 1, "timeout": 1}
    assert feedback.artifacts[0].retention == "bulk"
    assert benchmark.feedback([]).score is None


def test_bad_configuration_is_a_config_error_and_bad_arguments_an_input_error() -> None:
    with pytest.raises(ConfigError, match="n_actions"):
        default_registry().make("toy-counter", {"n_actions": 1})
    with pytest.raises(ConfigError, match=r"no such setting.*valid keys"):
        default_registry().make("toy-continuous", {"n_actions": 3})
    benchmark = make_toy_counter()
    with pytest.raises(InputError, match="split"):
        benchmark.episodes("training", seed=0, count=1)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="count"):
        benchmark.episodes("train", seed=0, count=-1)
    with pytest.raises(InputError, match="seed"):
        benchmark.episodes("train", seed=-1, count=1)
