"""A Benchmark's declared scoring rule and the one pure function that applies it to Episode outcomes.

A Benchmark whose score follows from its Episodes' statuses and returns declares it in its spec
(``BenchmarkSpec.scoring``, recorded in ``run-created``'s ``benchmark_spec``). The Host records every
aggregate -- a Submission's public Feedback score, each Candidate's Validation score, the Assessment
score -- with :func:`score_episodes` over that rule, and ``evoledger replay`` recomputes each of them
from the recorded Episodes with the same function, so a recorded aggregate that does not follow from
the Episodes is found. A Benchmark that declares no rule keeps its own ``feedback()`` score, which
an audit cannot recompute from the record (it says so).

The one rule today, ``mean_return``: the mean over the Episodes that were not infra faults of the
Episode's return, an Episode the Policy failed (any status other than ``ok`` and ``infra_fault``)
counting ``failure_return``; no Episode left: ``None``. The sum is exact (``math.fsum``), so the result
does not depend on the order of the Episodes; ``digits`` rounds it.

The selection's tie-break rule lives here too, once: :func:`rank_key` orders Candidates by score (per
the Benchmark's score direction), then fewer Policy failures, then earlier finish position. The Host
selects with it, the run-state projection ranks the recorded Candidates with it, and the audit checks
the recorded selection with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from evoledger.ledger.errors import SchemaError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Ranked",
    "ScoreDirection",
    "ScoreRule",
    "ScoreRuleError",
    "rank_candidates",
    "rank_key",
    "recorded_score_rule",
    "score_episodes",
]

_INFRA_FAULT = "infra_fault"

ScoreDirection = Literal["maximize", "minimize"]
"""Whether a higher or a lower score is better (a Benchmark declares it in its spec)."""


class ScoreRuleError(SchemaError):
    """A recorded scoring rule that cannot be read."""


class ScoreRule(BaseModel):
    """How a Benchmark's score follows from its Episodes (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: Literal["mean_return"] = "mean_return"
    failure_return: float = Field(allow_inf_nan=False)
    """What an Episode the Policy failed contributes (the worst return a running Policy could get)."""
    digits: int | None = Field(default=None, ge=0, le=15)
    """Round the mean to this many decimals (``None``: no rounding)."""

    def describe(self) -> str:
        """The rule in words, for findings and reports."""
        rounding = "" if self.digits is None else f", rounded to {self.digits} decimals"
        return f"mean return, failed Episodes count {self.failure_return:g}, infra faults left out{rounding}"


def score_episodes(rule: ScoreRule, outcomes: Iterable[tuple[str, float]]) -> float | None:
    """The score of Episodes given as ``(status, episode_return)`` under ``rule``; ``None`` when none counts."""
    counted = [
        float(episode_return) if status == "ok" else rule.failure_return
        for status, episode_return in outcomes
        if status != _INFRA_FAULT
    ]
    if not counted:
        return None
    try:
        mean = math.fsum(counted) / len(counted)
    except OverflowError:  # the exact sum of returns near the float limit is beyond it; their mean is not
        mean = math.fsum(value / len(counted) for value in counted)
    return mean if rule.digits is None else float(round(mean, rule.digits))


def recorded_score_rule(spec: Mapping[str, Any]) -> ScoreRule | None:
    """The rule a recorded ``benchmark_spec`` declares (``None``: it declares none).

    Raises :class:`ScoreRuleError` when it declares one that cannot be read.
    """
    raw = spec.get("scoring")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ScoreRuleError(f"benchmark_spec.scoring is a JSON {type(raw).__name__}, not an object")
    try:
        return ScoreRule.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ScoreRuleError(
            f"benchmark_spec.scoring {raw!r:.200} is not a known rule ({first['loc']}: {first['msg']}); "
            "this evoledger knows the rule 'mean_return'"
        ) from exc


class Ranked(Protocol):
    """What the tie-break rule reads of a Candidate (``CandidateScore``, the Host's and the audit's records)."""

    @property
    def score(self) -> float | None: ...

    @property
    def policy_failures(self) -> int: ...

    @property
    def finish_position(self) -> int: ...


_R = TypeVar("_R", bound=Ranked)


def rank_key(candidate: Ranked, direction: str) -> tuple[int, float, int, int]:
    """The tie-break rule as a sort key (smallest is best): score per direction (None last), failures, position."""
    if candidate.score is None:
        return (1, 0.0, candidate.policy_failures, candidate.finish_position)
    signed = -candidate.score if direction == "maximize" else candidate.score
    return (0, signed, candidate.policy_failures, candidate.finish_position)


def rank_candidates(candidates: Sequence[_R], direction: str) -> list[_R]:
    """``candidates`` best first under :func:`rank_key`."""
    return sorted(candidates, key=lambda c: rank_key(c, direction))
