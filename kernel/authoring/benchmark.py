"""The Benchmark protocol: what a concrete Benchmark provides to the kernel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from evoledger.kernel.authoring.episodes import Environment, EpisodeSpec, Split
from evoledger.kernel.authoring.feedback import EpisodeRecord, Feedback
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import ConfigError
from evoledger.projections.scoring import ScoreRule, score_episodes
from pydantic import BaseModel, ConfigDict

__all__ = [
    "Benchmark",
    "BenchmarkPrograms",
    "BenchmarkSpec",
    "ScoreDirection",
    "benchmark_programs",
    "parameters_digest",
    "score_of",
    "starting_program",
]

ScoreDirection = Literal["maximize", "minimize"]


def parameters_digest(parameters: Mapping[str, Any]) -> str:
    """The digest of a Benchmark's public parameters (canonical JSON), recorded as part of its identity."""
    return digest_of(canonical_json(dict(parameters)))


class BenchmarkSpec(BaseModel):
    """A Benchmark's public identity and description. Everything here may be shown to the Agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    description: str
    observation_space: Mapping[str, Any]
    action_space: Mapping[str, Any]
    metadata: Mapping[str, Any]
    environment_parameters: Mapping[str, Any]
    max_episode_steps: int
    primary_metric: str
    score_direction: ScoreDirection = "maximize"
    parameters_digest: str
    scoring: ScoreRule | None = None
    """How the score follows from the Episodes (``projections.scoring``): the Host records every score with it and
    ``evoledger replay`` recomputes them from the recorded Episodes. ``None``: ``feedback()``'s own score, which an
    audit cannot recompute."""


@runtime_checkable
class Benchmark(Protocol):
    """A family of Episodes with a score.

    ``observation_space`` / ``action_space`` are the gymnasium ``Space`` objects handed to the Policy in its
    context; ``spec`` describes them as JSON. ``episodes()`` must be deterministic in ``(split, seed, count)``.

    A Benchmark may also have a ``programs`` attribute, the :class:`BenchmarkPrograms` it ships: a Run starts from
    one of them unless given a Program (:func:`starting_program`). It is not part of this protocol, so that a
    Benchmark without shipped Programs is still a Benchmark (its Runs need ``--program DIR``).
    """

    @property
    def spec(self) -> BenchmarkSpec: ...

    @property
    def observation_space(self) -> Any: ...

    @property
    def action_space(self) -> Any: ...

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]: ...

    def make_environment(self, episode: EpisodeSpec) -> Environment: ...

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback: ...


def score_of(benchmark: Benchmark, records: Sequence[EpisodeRecord], feedback: Feedback | None = None) -> float | None:
    """The score the Host records for ``records``: the spec's declared rule (the function ``evoledger replay``
    recomputes it with), else ``feedback()``'s score (``feedback``: already computed for these records)."""
    rule = benchmark.spec.scoring
    if rule is not None:
        return score_episodes(rule, ((r.status, r.episode_return) for r in records))
    return (feedback if feedback is not None else benchmark.feedback(records)).score


@dataclass(frozen=True, slots=True)
class BenchmarkPrograms:
    """The Policy Programs a Benchmark ships, each a directory holding a ``policy.py``."""

    baseline: Path
    """A weak start that acts at random (the floor any Agent should beat)."""
    tunable: Path | None = None
    """A parameterised Program: its ``params.json``, a flat JSON object of numbers, is what the built-in Agents tune
    (``hill-climb`` searches it; without one it writes a generic family of its own)."""
    heuristic: Path | None = None
    """A hand-written rule that clearly beats the baseline: evidence that the Benchmark can be solved."""

    @property
    def starting(self) -> Path:
        """The Program a Run starts from: the tunable one where there is one, else the baseline."""
        return self.tunable or self.baseline


def benchmark_programs(benchmark: Benchmark) -> BenchmarkPrograms:
    """The Programs ``benchmark`` ships (its ``programs`` attribute); a ConfigError naming the fix if it has none."""
    programs = getattr(benchmark, "programs", None)
    if not isinstance(programs, BenchmarkPrograms):
        raise ConfigError(
            f"the Benchmark {benchmark.spec.id!r} ships no starting Program; give one with --program DIR "
            "(a directory with a policy.py)"
        )
    return programs


def starting_program(benchmark: Benchmark) -> Path:
    """The one place that says which Program a Run starts from, and ``evoledger evaluate`` runs when given none."""
    return benchmark_programs(benchmark).starting
