"""The shared frame of a Benchmark built in the Host from a static table: spec, spaces, Episodes and Feedback.

The families with their own environment (dm-control, MetaWorld, robosuite) cannot import their upstream package in
the Host, so their spaces come from static tables and everything but ``make_environment()`` is fixed at
construction. :class:`TableBenchmark` holds what they share: the :class:`BenchmarkSpec` (score ``mean_return``,
maximized, by the declared mean-return rule), the shipped Programs, Episode ``i`` of a split seeded with
``derive_seed(seed, "episode", split, i)``, and Feedback by ``summarize_episodes`` with the family's
:meth:`~TableBenchmark.outcome` and :meth:`~TableBenchmark.episode_notes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from evoledger.benchmarks.feedback_summary import mean_return_rule, summarize_episodes
from evoledger.kernel.authoring import (
    BenchmarkPrograms,
    BenchmarkSpec,
    EpisodeRecord,
    EpisodeSpec,
    Extra,
    Feedback,
    Split,
    check_episode_request,
    derive_seed,
    describe_space,
    parameters_digest,
)
from gymnasium import spaces

__all__ = ["TableBenchmark"]

_Observation = TypeVar("_Observation", bound="spaces.Space[Any]")


class TableBenchmark(Generic[_Observation]):
    """A Benchmark whose facts are all known in the Host; a family subclasses it with its Environment and notes
    (parameterised by its observation space's type)."""

    def __init__(
        self,
        *,
        name: str,
        description: str,
        observation_space: _Observation,
        action_space: spaces.Box,
        parameters: Mapping[str, Any],
        source: str,
        extra: Extra,
        metadata: Mapping[str, Any],
        max_episode_steps: int,
        rule: str,
        failure_return: float,
        programs: BenchmarkPrograms,
    ) -> None:
        """``metadata``: the family's own entries, after ``source``, ``family``, ``requirements`` (the venv's pins),
        ``score_rule`` and ``failure_return``, which every such Benchmark records."""
        self._name = name
        self._steps = max_episode_steps
        self._rule = rule
        self._failure_return = failure_return
        self._observation_space = observation_space
        self._action_space = action_space
        self._programs = programs
        own = extra.own_environment
        self._spec = BenchmarkSpec(
            id=name,
            description=description,
            observation_space=describe_space(observation_space),
            action_space=describe_space(action_space),
            metadata={
                "source": source,
                "family": extra.name,
                "requirements": list(own.requirements) if own else [],
                "score_rule": rule,
                "failure_return": failure_return,
                **metadata,
            },
            environment_parameters=dict(parameters),
            max_episode_steps=max_episode_steps,
            primary_metric="mean_return",
            score_direction="maximize",
            parameters_digest=parameters_digest(parameters),
            scoring=mean_return_rule(failure_return),
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms:
        """The Programs the family ships for this Benchmark (the zero-action baseline, a heuristic where it has one)."""
        return self._programs

    @property
    def observation_space(self) -> _Observation:
        return self._observation_space

    @property
    def action_space(self) -> spaces.Box:
        return self._action_space

    @property
    def max_episode_steps(self) -> int:
        return self._steps

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        """``count`` Episodes of ``split``; Episode ``i`` is seeded with ``derive_seed(seed, "episode", split, i)``."""
        check_episode_request(split, seed=seed, count=count)
        return [EpisodeSpec(split=split, index=i, seed=derive_seed(seed, "episode", split, i)) for i in range(count)]

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Score, counts, return statistics, outcomes, notes and a trace of the first Episodes."""
        return summarize_episodes(
            benchmark_id=self._name,
            primary_metric="mean_return",
            score_rule=self._rule,
            failure_return=self._failure_return,
            records=records,
            outcome=self.outcome,
            notes=self.episode_notes,
        )

    def outcome(self, record: EpisodeRecord) -> str:
        """The Episode's outcome class (the family says which)."""
        raise NotImplementedError

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        """The Episode's notes (the family says which)."""
        raise NotImplementedError
