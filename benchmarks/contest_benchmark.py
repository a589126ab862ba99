"""What every programming-contest Benchmark shares: Episode planning, the Benchmark object, Feedback scaffolding.

A contest Benchmark (``atcoder/...``, ``codechef/...``) is an independent simulator of a published problem: the
Episode's seed is the case seed of its generator (:mod:`~evoledger.benchmarks.contest_stream`), the Policy plays
the problem's turns (or submits one answer), the simulator rejects a whole Action that breaks a rule
(:class:`~evoledger.kernel.authoring.InvalidAction`, so the Episode ends as a Policy failure and scores the
problem's failure score) and emits the problem's score as the reward of the last step.

* Planning (:func:`contest_episode_seed`): the seed of Episode ``i`` of a split is the first 8 bytes (big-endian)
  of ``SHA-256(b"evopolicygym-<leaf>/episode-seed/v1\\0" || split || 0x00 || host seed (8 bytes BE) || i (8 bytes
  BE))``, the formula of the reference harness, so one Host seed gives the same cases there and here.
* Observations and actions are JSON-like (dicts holding lists of varying length, ``None`` on some steps), declared
  as :class:`~evoledger.kernel.authoring.JsonSpace` s: the kernel's action allow-list and wire carry them
  unchanged, the space's ``contains`` checks types, lengths and ranges strictly.
* :class:`ContestBenchmark` is the Benchmark object; a contest module gives it a :class:`Contest` (its identity,
  spaces, Environment and Feedback summary).
* Feedback: the score (mean per-Episode score, failed Episodes counting the failure score, infra faults left out),
  Episode statuses, the first Policy failure messages, the contest's own summary, and a bounded ``trace.jsonl``
  Artifact (bulk retention).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evoledger.kernel.authoring import (
    Artifact,
    BenchmarkPrograms,
    BenchmarkSpec,
    Environment,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    JsonSpace,
    ScoreDirection,
    ScoreRule,
    Split,
    check_episode_request,
    describe_space,
    parameters_digest,
    score_episodes,
)
from pydantic import BaseModel, ConfigDict

__all__ = [
    "Contest",
    "ContestBenchmark",
    "ContestConfig",
    "ContestSummary",
    "contest_episode_seed",
    "jsonl_bytes",
    "mean_or_none",
]

_MAX_FAILURE_MESSAGES: Final = 4
_MAX_MESSAGE_CHARS: Final = 400

ContestSummary = Callable[[Sequence[EpisodeRecord]], tuple[dict[str, Any], bytes]]
"""A contest's own Feedback: ``(summary content, trace.jsonl bytes)`` for a set of Episode records."""


def contest_episode_seed(leaf: str, split: str, seed: int, index: int) -> int:
    """The case seed of Episode ``index`` of ``split`` for the Host seed ``seed`` (see the module docstring).

    ``leaf`` names the problem as the reference harness does (``molecules``, ``apple-incremental-game``, ...).
    """
    domain = f"evopolicygym-{leaf}/episode-seed/v1\0".encode("ascii")
    message = domain + split.encode("ascii") + b"\0" + (seed % 2**64).to_bytes(8, "big") + index.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def jsonl_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """``rows`` as JSON lines (sorted keys, compact)."""
    return "".join(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n" for row in rows).encode("utf-8")


def mean_or_none(values: Sequence[float]) -> float | None:
    """The mean of ``values``, ``None`` when there are none."""
    return sum(values) / len(values) if values else None


class ContestConfig(BaseModel):
    """A contest takes no configuration: the problem's constants are its identity (unknown keys are refused)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True, slots=True)
class Contest:
    """One contest problem as a Benchmark: identity, spaces, score, Environment and Feedback summary."""

    name: str
    """The registry name (``atcoder/ahc058-apple-incremental-game``)."""
    upstream_id: str
    """The reference harness's Benchmark id (``atcoder/AHC058/AppleIncrementalGame/mean-log2-score-v1``)."""
    leaf: str
    """The reference harness's leaf name, which names the Episode-seed domain (:func:`contest_episode_seed`)."""
    description: str
    observation_space: JsonSpace
    action_space: JsonSpace
    max_episode_steps: int
    primary_metric: str
    failure_score: float
    environment: Callable[[int], Environment]
    """A fresh Environment for a case seed."""
    summary: ContestSummary
    programs: BenchmarkPrograms
    direction: ScoreDirection = "maximize"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """The problem's public constants (the spec's ``environment_parameters``)."""


class ContestBenchmark:
    """A contest problem as a Benchmark (see the module docstring)."""

    def __init__(self, contest: Contest) -> None:
        self.contest = contest
        self._scoring = ScoreRule(failure_return=contest.failure_score)
        parameters = dict(contest.parameters)
        self._spec = BenchmarkSpec(
            id=contest.name,
            description=contest.description,
            observation_space=describe_space(contest.observation_space),
            action_space=describe_space(contest.action_space),
            metadata={
                "upstream_id": contest.upstream_id,
                "score_rule": f"mean per-Episode score; a failed Episode scores {contest.failure_score:g}",
                **contest.metadata,
            },
            environment_parameters=parameters,
            max_episode_steps=contest.max_episode_steps,
            primary_metric=contest.primary_metric,
            score_direction=contest.direction,
            parameters_digest=parameters_digest(parameters),
            scoring=self._scoring,
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms:
        return self.contest.programs

    @property
    def observation_space(self) -> JsonSpace:
        return self.contest.observation_space

    @property
    def action_space(self) -> JsonSpace:
        return self.contest.action_space

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        """``count`` Episodes of ``split``, each with its case seed (deterministic in ``(split, seed, i)``)."""
        check_episode_request(split, seed=seed, count=count)
        return [
            EpisodeSpec(split=split, index=i, seed=contest_episode_seed(self.contest.leaf, split, seed, i))
            for i in range(count)
        ]

    def make_environment(self, episode: EpisodeSpec) -> Environment:
        """A fresh Environment playing the case of ``episode``."""
        return self.contest.environment(episode.seed)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Score, statuses, the first failure messages, the contest's summary and its bounded trace."""
        score = score_episodes(self._scoring, ((r.status, r.episode_return) for r in records))
        statuses = Counter(r.status for r in records)
        failures = [
            {"index": r.index, "status": r.status, "message": (r.failure_message or "")[:_MAX_MESSAGE_CHARS]}
            for r in records
            if r.failed
        ][:_MAX_FAILURE_MESSAGES]
        summary, trace = self.contest.summary(records)
        content: dict[str, Any] = {
            "benchmark": self.contest.name,
            self.contest.primary_metric: score,
            "episodes": len(records),
            "scored_episodes": sum(1 for r in records if r.status != "infra_fault"),
            "statuses": dict(sorted(statuses.items())),
            "failure_score": self.contest.failure_score,
            "failures": failures,
            **summary,
        }
        artifacts = (Artifact("trace.jsonl", "application/x-ndjson", trace, "bulk"),) if trace else ()
        return Feedback(score=score, content=content, artifacts=artifacts)
