"""A tiny in-process Episode runner for Benchmark tests (the real execution layer is tested elsewhere).

``play_program(benchmark, program_dir, count=...)`` loads ``policy.py`` from a packaged Program directory with
importlib, gives it a context with the same public attributes the execution layer provides, steps ``count``
Episodes of the ``train`` split and returns the EpisodeRecords (with JSON trajectories) a Host would write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.authoring import Benchmark, EpisodeRecord, Trajectory, derive_seed
from evoledger.kernel.authoring.conformance_episodes import jsonable
from evoledger.tests.support.program_module import load_program_module

PlayProgram = Callable[..., list[EpisodeRecord]]


@dataclass(frozen=True)
class _Context:
    observation_space: Any
    action_space: Any
    metadata: dict[str, Any]
    environment_parameters: dict[str, Any]
    policy_seed: int


def _play(benchmark: Benchmark, program: Path, *, count: int, seed: int = 0) -> list[EpisodeRecord]:
    module = load_program_module(program)
    records: list[EpisodeRecord] = []
    for episode in benchmark.episodes("train", seed=seed, count=count):
        context = _Context(
            observation_space=benchmark.observation_space,
            action_space=benchmark.action_space,
            metadata=dict(benchmark.spec.metadata),
            environment_parameters=dict(benchmark.spec.environment_parameters),
            policy_seed=derive_seed(seed, "policy", episode.index),
        )
        policy = module.make_policy(context)
        env = benchmark.make_environment(episode)
        observation = env.reset()
        observations = [jsonable(observation)]
        actions: list[Any] = []
        rewards: list[float] = []
        metrics: list[dict[str, float]] = []
        terminated = truncated = False
        while not (terminated or truncated):
            action = policy.act(observation)
            step = env.step(action)
            observation = step.observation
            actions.append(jsonable(action))
            rewards.append(step.reward)
            metrics.append(dict(step.metrics))
            observations.append(jsonable(observation))
            terminated, truncated = step.terminated, step.truncated
        env.close()
        records.append(
            EpisodeRecord(
                split="train",
                index=episode.index,
                status="ok",
                episode_return=float(sum(rewards)),
                steps=len(actions),
                terminated=terminated,
                truncated=truncated,
                trajectory=Trajectory(observations, actions, rewards, terminated, truncated, metrics),
            )
        )
    return records


@pytest.fixture
def play_program() -> PlayProgram:
    """Run a packaged Program on a Benchmark in-process; see the module docstring."""
    return _play
