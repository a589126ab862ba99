"""Gymnasium environments as evoledger Benchmarks.

:class:`GymBenchmark` turns a gymnasium environment id plus keyword arguments (a :class:`GymTask`) into a
Benchmark: a deterministic Episode pool, a fresh gymnasium environment per Episode seeded with the Episode's
Host-owned seed, observations in exactly the types the Gymnasium space defines and strict action checking for every
space (:mod:`evoledger.benchmarks.gym_spaces`: an action outside the action space raises
:class:`~evoledger.kernel.authoring.InvalidAction`; nothing is ever clipped or repaired) and Feedback built by
:mod:`evoledger.benchmarks.feedback_summary`.

Scoring is uniform across the gymnasium Benchmarks: the score is the mean over Episodes of the Episode's return,
where an Episode the Policy failed (exception, timeout, invalid action, ...) counts as ``failure_return`` (the
worst return a running Policy could get, so crashing never pays) and infra faults are left out. Subclasses
override the hooks :meth:`GymBenchmark.outcome`, :meth:`GymBenchmark.step_metrics` and
:meth:`GymBenchmark.episode_notes` to describe what happened in Benchmark-specific words. A family that reads the
simulation itself after each step (a physics body, the ego vehicle, the world's achievements) overrides
:meth:`GymBenchmark.start_episode` and :meth:`GymBenchmark.simulation_metrics`, which see the unwrapped gymnasium
environment, the step's ``info``, the action and a per-Episode scratch dict (:class:`GymStep`).

This module has no ``BENCHMARKS``; the concrete Benchmarks live in ``classic_control`` and ``toy_text``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import gymnasium as gym
from evoledger.benchmarks.feedback_summary import mean_return_rule, summarize_episodes
from evoledger.benchmarks.gym_spaces import check_action, plain_observation
from evoledger.benchmarks.visual_evidence import VisualEvidence, add_visual_evidence
from evoledger.kernel.authoring import (
    BenchmarkPrograms,
    BenchmarkSpec,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    Split,
    Step,
    check_episode_request,
    derive_seed,
    describe_space,
    parameters_digest,
)
from evoledger.ledger.errors import ConfigError, InfraError
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_EPISODE_STEPS_LIMIT",
    "GymBenchmark",
    "GymConfig",
    "GymEnvironment",
    "GymStep",
    "GymTask",
    "check_action",
]

MAX_EPISODE_STEPS_LIMIT: Final = 100_000
"""The largest ``max_episode_steps`` a configuration may ask for."""


class GymConfig(BaseModel):
    """Configuration shared by every gymnasium Benchmark; subclasses add Benchmark-specific fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EPISODE_STEPS_LIMIT,
        description="Truncate Episodes after this many steps (default: the Benchmark's usual limit).",
    )


@dataclass(frozen=True, slots=True)
class GymTask:
    """Everything that defines one gymnasium Benchmark.

    ``env_kwargs`` go to ``gymnasium.make``; together with ``public_parameters`` (extra public facts such as a
    map) and the step limit they form ``spec.environment_parameters`` and therefore its digest. Everything here
    is public: the Policy and the Agent may see it. ``programs`` are the Policy Programs the Benchmark ships.
    """

    benchmark_id: str
    gymnasium_id: str
    description: str
    primary_metric: str
    score_rule: str
    failure_return: float
    max_episode_steps: int
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    public_parameters: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    programs: BenchmarkPrograms | None = None
    visual_evidence: VisualEvidence | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_episode_steps <= MAX_EPISODE_STEPS_LIMIT:
            raise ConfigError(
                f"max_episode_steps {self.max_episode_steps} for {self.benchmark_id!r} must be between 1 and "
                f"{MAX_EPISODE_STEPS_LIMIT}"
            )
        if not math.isfinite(self.failure_return):
            raise ConfigError(f"failure_return {self.failure_return!r} for {self.benchmark_id!r} must be finite")


@dataclass(frozen=True, slots=True)
class GymStep:
    """One step of a gymnasium environment, as :meth:`GymBenchmark.simulation_metrics` sees it."""

    env: Any
    """The unwrapped gymnasium environment, after the step."""
    action: Any
    """The action as the Policy sent it."""
    env_action: Any
    """The action as the environment received it (checked and converted to the action space's form)."""
    observation: Any
    """The observation as the Policy receives it."""
    reward: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any]
    """The ``info`` the environment returned with the step."""
    totals: dict[str, Any]
    """Scratch state of this Episode: filled by :meth:`GymBenchmark.start_episode`, kept across its steps."""


def _plain_observation(space: spaces.Space[Any], observation: Any) -> Any:
    """Observations as the Policy receives them (:func:`~evoledger.benchmarks.gym_spaces.plain_observation`)."""
    return plain_observation(space, observation)


class GymBenchmark:
    """A Benchmark backed by one gymnasium environment id (see the module docstring for the score)."""

    def __init__(self, task: GymTask) -> None:
        self._task = task
        self._observation_space, self._action_space = self._spaces()
        parameters: dict[str, Any] = {
            "gymnasium_id": task.gymnasium_id,
            "max_episode_steps": task.max_episode_steps,
            **dict(task.env_kwargs),
            **dict(task.public_parameters),
        }
        metadata: dict[str, Any] = {
            "source": "gymnasium",
            "gymnasium_version": gym.__version__,
            "score_rule": task.score_rule,
            "failure_return": task.failure_return,
            **dict(task.metadata),
        }
        self._spec = BenchmarkSpec(
            id=task.benchmark_id,
            description=task.description,
            observation_space=describe_space(self._observation_space),
            action_space=describe_space(self._action_space),
            metadata=metadata,
            environment_parameters=parameters,
            max_episode_steps=task.max_episode_steps,
            primary_metric=task.primary_metric,
            score_direction="maximize",
            parameters_digest=parameters_digest(parameters),
            scoring=mean_return_rule(task.failure_return),
        )

    @property
    def task(self) -> GymTask:
        """The task definition this Benchmark was built from."""
        return self._task

    @property
    def spec(self) -> BenchmarkSpec:
        """The public description (spaces as JSON, parameters, score)."""
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms | None:
        """The Policy Programs this Benchmark ships (a Run starts from one of them)."""
        return self._task.programs

    @property
    def observation_space(self) -> spaces.Space[Any]:
        """The gymnasium observation space handed to the Policy."""
        return self._observation_space

    @property
    def action_space(self) -> spaces.Space[Any]:
        """The gymnasium action space handed to the Policy."""
        return self._action_space

    def _spaces(self) -> tuple[spaces.Space[Any], spaces.Space[Any]]:
        """The observation and action spaces, read from a probe environment; a family whose package runs only in its
        own environment (the Host must not import it) returns them from a static table instead."""
        probe = self._make_gym_env()
        try:
            return probe.observation_space, probe.action_space
        finally:
            probe.close()

    def _make_gym_env(self, **overrides: Any) -> Any:
        return gym.make(
            self._task.gymnasium_id,
            max_episode_steps=self._task.max_episode_steps,
            disable_env_checker=True,
            **{**dict(self._task.env_kwargs), **overrides},
        )

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        """``count`` Episodes of ``split``; Episode ``i`` is seeded with ``derive_seed(seed, "episode", split, i)``."""
        check_episode_request(split, seed=seed, count=count)
        return [EpisodeSpec(split=split, index=i, seed=derive_seed(seed, "episode", split, i)) for i in range(count)]

    def make_environment(self, episode: EpisodeSpec, **make_overrides: Any) -> GymEnvironment:
        """A fresh Environment for ``episode`` (``make_overrides``: the Host's rendering copy, see GymEnvironment)."""
        return GymEnvironment(self, episode, **make_overrides)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Score, counts, return statistics, per-Episode summaries and a trace of the first Episodes."""
        feedback = summarize_episodes(
            benchmark_id=self._task.benchmark_id,
            primary_metric=self._task.primary_metric,
            score_rule=self._task.score_rule,
            failure_return=self._task.failure_return,
            records=records,
            outcome=self.outcome,
            notes=self.episode_notes,
        )
        return self.with_visual_evidence(feedback, records)

    def with_visual_evidence(self, feedback: Feedback, records: Sequence[EpisodeRecord]) -> Feedback:
        """``feedback`` plus contact sheets of the first records' Episodes when the task asks for visual evidence
        (``GymTask.visual_evidence``); for subclasses that build their own Feedback."""
        evidence = self._task.visual_evidence
        if evidence is None:
            return feedback
        render_kwargs = {"render_mode": "rgb_array", **dict(evidence.render_kwargs)}
        return add_visual_evidence(
            feedback,
            records,
            evidence,
            lambda e: self.make_environment(e, **render_kwargs),
            renderer=self._task.gymnasium_id,
        )

    # Hooks for subclasses -------------------------------------------------------------------------------------

    def step_metrics(self, observation: Any, reward: float, terminated: bool, truncated: bool) -> dict[str, float]:
        """Per-step metrics recorded in the trajectory (none by default)."""
        return {}

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        """At ``reset()``: fill the Episode's (empty) scratch ``totals`` from the unwrapped ``env`` and its ``info``
        (nothing by default)."""

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """Per-step metrics recorded in the trajectory, with the simulation in view (:meth:`step_metrics` by
        default). A rejected action never reaches the environment, so this never sees one."""
        return self.step_metrics(step.observation, step.reward, step.terminated, step.truncated)

    def outcome(self, record: EpisodeRecord) -> str:
        """A short label for how an Episode without a Policy failure ended."""
        return "terminated" if record.terminated else "truncated"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        """Extra per-Episode numbers for Feedback (computed from the trajectory when present)."""
        return {}


class GymEnvironment:
    """One Episode of a :class:`GymBenchmark`: a fresh gymnasium environment seeded on ``reset()``."""

    def __init__(self, benchmark: GymBenchmark, episode: EpisodeSpec, **make_overrides: Any) -> None:
        """``make_overrides`` go to ``gymnasium.make`` (``render_mode`` for the Host's copy; never a Policy's)."""
        self._benchmark = benchmark
        self._episode = episode
        self._env: Any = benchmark._make_gym_env(**make_overrides)
        self._started = False
        self._ended = False
        self._closed = False
        self._totals: dict[str, Any] = {}
        kind, base = type(benchmark), GymBenchmark
        plain_hooks = kind.simulation_metrics is base.simulation_metrics and kind.step_metrics is base.step_metrics
        self._no_step_metrics = plain_hooks
        """Neither hook is overridden: every step's metrics are ``{}`` without building a GymStep (per-step cost)."""

    def reset(self) -> Any:
        """Seed the gymnasium environment with the Episode's seed and return the first observation."""
        if self._closed:
            raise InfraError(f"reset() on a closed Environment (episode {self._episode.split}/{self._episode.index})")
        observation, info = self._env.reset(seed=self._episode.seed)
        self._started, self._ended = True, False
        self._totals = {}
        self._benchmark.start_episode(self._env.unwrapped, info, self._totals)
        return _plain_observation(self._benchmark.observation_space, observation)

    def step(self, action: Any) -> Step:
        """Apply ``action`` (checked strictly against the action space) and return the Step."""
        if not self._started or self._ended or self._closed:
            state = "closed" if self._closed else ("ended" if self._ended else "not reset")
            raise InfraError(f"step() called on an Environment that is {state}; call reset() first")
        checked = check_action(self._benchmark.action_space, action)
        observation, reward, terminated, truncated, info = self._env.step(checked)
        plain = _plain_observation(self._benchmark.observation_space, observation)
        reward_value = float(reward)
        terminated, truncated = bool(terminated), bool(truncated)
        self._ended = terminated or truncated
        if self._no_step_metrics:
            return Step(observation=plain, reward=reward_value, terminated=terminated, truncated=truncated, metrics={})
        metrics = self._benchmark.simulation_metrics(
            GymStep(
                env=self._env.unwrapped,
                action=action,
                env_action=checked,
                observation=plain,
                reward=reward_value,
                terminated=terminated,
                truncated=truncated,
                info=info,
                totals=self._totals,
            )
        )
        return Step(observation=plain, reward=reward_value, terminated=terminated, truncated=truncated, metrics=metrics)

    def render(self) -> Any:
        """The gymnasium environment's ``render()`` (an RGB array when made with ``render_mode="rgb_array"``)."""
        return self._env.render()

    def close(self) -> None:
        """Close the gymnasium environment; safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._env.close()
