"""The audit's vocabulary: the rules of a Run re-derived from its log, and the records the audit keeps.

:func:`rules_of` applies the kernel's ``RunConfig`` formulas (pool size, Episodes per Submission,
Candidate limit, the infra-fault refund rule of ``projections.refunds``) to the configuration
``run-created`` recorded, so the audit needs nothing but the log (and the per-Submission protocol
cap, which the caller passes). :func:`rank_key` is the
selection's tie-break rule as a sort key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evoledger.projections.refunds import RefundRule

__all__ = [
    "AuditedSubmission",
    "PlannedSeed",
    "RunRules",
    "SelectionScore",
    "Violation",
    "rank_key",
    "rules_of",
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable ``rule`` code, what it means, and the first Event that shows it."""

    rule: str
    message: str
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class PlannedSeed:
    """One ``episode-planned`` Event: the Host seeds of a pool Episode."""

    split: str
    index: int
    env_seed: int
    policy_seed: int
    scenario: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunRules:
    """The rules of one Run, re-derived from its ``run-created`` Event (``None``: not recorded)."""

    budget: int
    max_submissions: int
    strict: bool
    pool_size: int | None
    episodes_per_submission: int | None
    candidate_limit: int | None
    validation_episodes: int | None
    assessment_episodes: int | None
    fallback: str | None
    refund_rule: RefundRule | None = None
    """The infra-fault refund rule the configuration records (``None``: older Runs record none)."""


def _count(mapping: object, key: str) -> int | None:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if type(value) is int and value >= 0 else None


def rules_of(created: dict[str, Any], episode_cap: int) -> RunRules:
    """The rules recorded by a ``run-created`` payload (the kernel's RunConfig formulas, from the log)."""
    budget, max_subs = created["episode_budget"], created["max_submissions"]
    if type(budget) is not int or type(max_subs) is not int:
        raise TypeError("episode_budget and max_submissions must be integers")
    raw = created.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    validation, assessment = config.get("validation"), config.get("assessment")
    pool = _count(config, "episode_pool_size") or budget
    per_sub = min(pool, _count(config, "max_episodes_per_submission") or episode_cap, episode_cap)
    val_eps, max_candidates = _count(validation, "episodes"), _count(validation, "max_candidates")
    limit = None if val_eps is None else (max_candidates if val_eps > 0 else 1)
    fallback = config.get("fallback")
    return RunRules(
        budget=budget,
        max_submissions=max_subs,
        strict=created.get("finish_budget_policy") == "require_budget_exhaustion",
        pool_size=pool,
        episodes_per_submission=per_sub,
        candidate_limit=limit,
        validation_episodes=val_eps,
        assessment_episodes=_count(assessment, "episodes"),
        fallback=fallback if isinstance(fallback, str) else None,
        refund_rule=RefundRule.recorded(config),
    )


class AuditedSubmission:
    """One accepted Submission as the audit tracks it (results and voided/refunded indices)."""

    __slots__ = ("episodes", "position", "program", "published", "refunded", "results", "score", "voided")

    def __init__(self, position: int, program: str, episodes: frozenset[int]) -> None:
        self.position = position
        self.program = program
        self.episodes = episodes
        self.results: dict[int, str] = {}
        self.voided: set[int] = set()
        self.refunded: set[int] = set()
        self.published = False
        self.score: float | None = None

    @property
    def failures(self) -> int:
        return sum(1 for status in self.results.values() if status != "ok")


@dataclass(frozen=True, slots=True)
class SelectionScore:
    """One Candidate's ranking keys as ``candidate-selected`` records them."""

    submission_id: str
    program_digest: str
    score: float | None
    policy_failures: int
    finish_position: int


def rank_key(score: SelectionScore, direction: str) -> tuple[int, float, int, int]:
    """The tie-break rule as a sort key (smallest is best): score per direction, failures, finish position."""
    if score.score is None:
        return (1, 0.0, score.policy_failures, score.finish_position)
    signed = -score.score if direction == "maximize" else score.score
    return (0, signed, score.policy_failures, score.finish_position)
