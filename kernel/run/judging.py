"""Judging a finished Run: private Validation of every Candidate, selection, held-out Assessment.

All Candidates run the same validation Episodes; the selected one is the best by score (respecting
the Benchmark's score direction), then fewer Policy failures, then earlier finish position (the rule of
``projections.scoring.rank_key``, which the run state and the audit rank with too). Only the
selected Program is assessed, on the held-out split. Every fact here is a ``host`` Event and never
reaches the Agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, Executor, PolicyLimits
from evoledger.kernel.planning import PlannedEpisode
from evoledger.kernel.recording import ObjectSink
from evoledger.ledger.errors import InfraError
from evoledger.ledger.events import (
    AssessmentFinished,
    CandidateScore,
    CandidateSelected,
    EpisodeSummary,
)
from evoledger.ledger.events.base import EpisodeStatus
from evoledger.projections.scoring import rank_candidates

__all__ = [
    "CandidateResult",
    "JudgingError",
    "assessment_event",
    "run_judged_episodes",
    "select",
]

_INFRA_RETRIES = 2


class JudgingError(InfraError):
    """Validation or Assessment could not be completed (persistent infra faults)."""


@dataclass(frozen=True, slots=True)
class CandidateResult:
    """One Candidate's Validation result."""

    submission_id: str
    program_digest: str
    finish_position: int
    score: float | None
    policy_failures: int


def run_judged_episodes(
    executor: Executor,
    plans: Sequence[PlannedEpisode],
    program_dir: Path,
    limits: PolicyLimits,
    *,
    retry_limit: int | None = None,
) -> list[EpisodeOutcome]:
    """Run private Episodes, retrying infra faults (at most ``_INFRA_RETRIES`` rounds).

    ``retry_limit`` None: faults that persist raise :class:`JudgingError`. ``retry_limit`` n (one Candidate's
    allowance, ``projections.refunds``): at most n Episodes are retried in all, and a fault that is not retried
    is returned as it is (an ``infra_fault`` outcome) for the caller to count as the Candidate's failure.
    """
    outcomes: dict[int, EpisodeOutcome] = {}
    remaining = list(plans)
    retries_left = retry_limit
    for attempt in range(_INFRA_RETRIES + 1):
        tasks = [
            EpisodeTask(episode=p.spec, program_dir=program_dir, policy_seed=p.policy_seed, limits=limits)
            for p in remaining
        ]
        retry: list[PlannedEpisode] = []
        by_index = {p.spec.index: p for p in remaining}
        for outcome in executor.run(tasks):
            if outcome.status != "infra_fault":
                outcomes[outcome.index] = outcome
            elif retries_left is None:
                retry.append(by_index[outcome.index])
            elif retries_left > 0 and attempt < _INFRA_RETRIES:
                retries_left -= 1
                retry.append(by_index[outcome.index])
            else:
                outcomes[outcome.index] = outcome  # past the Candidate's allowance: its own failure
        remaining = retry
        if not remaining:
            return [outcomes[p.spec.index] for p in plans]
    raise JudgingError(
        f"{len(remaining)} private Episodes kept failing with infra faults after {_INFRA_RETRIES} retries"
    )


def select(results: Sequence[CandidateResult], direction: str, validated: bool) -> CandidateSelected:
    """The ``candidate-selected`` Event for ``results`` (already validated, in finish order)."""
    ranked = rank_candidates(results, direction)
    best = ranked[0]
    if not validated:
        tie_break = "the only Candidate (no Validation configured)"
    elif len(ranked) == 1:
        tie_break = "the only Candidate"
    else:
        tie_break = (
            f"best validation score ({direction}), then fewer Policy failures, then earlier finish position; "
            f"ranking: {', '.join(r.submission_id for r in ranked)}"
        )
    return CandidateSelected(
        submission_id=best.submission_id,
        program_digest=best.program_digest,
        scores=tuple(
            CandidateScore(
                submission_id=r.submission_id,
                program_digest=r.program_digest,
                score=r.score,
                policy_failures=r.policy_failures,
                finish_position=r.finish_position,
            )
            for r in results
        ),
        tie_break=tie_break,
    )


def assessment_event(
    *,
    submission_id: str,
    program_digest: str,
    outcomes: Sequence[EpisodeOutcome],
    score: float | None,
    objects: ObjectSink,
) -> AssessmentFinished:
    """The ``assessment-finished`` Event for the selected Program's held-out Episodes."""
    return AssessmentFinished(
        submission_id=submission_id,
        program_digest=program_digest,
        score=score,
        episode_count=len(outcomes),
        episodes=tuple(
            EpisodeSummary(
                index=o.index,
                status=_recorded_status(o),
                episode_return=o.episode_return,
                steps=o.steps,
                trajectory_digest=objects.put(o.trajectory or b""),
            )
            for o in outcomes
        ),
    )


def _recorded_status(outcome: EpisodeOutcome) -> EpisodeStatus:
    """An assessed Episode's status as recorded: infra faults were retried away (``run_judged_episodes``)."""
    status = outcome.status
    if status == "infra_fault":
        raise JudgingError(f"assessment Episode {outcome.index} ended in an infra fault that was not retried")
    return status
