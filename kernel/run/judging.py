"""Judging a finished Run: private Validation of every Candidate, selection, held-out Assessment, the end.

:func:`judge_run` runs after Agent authority ends: it chooses the Candidates, validates, selects,
assesses and records ``run-ended``. Each step reads what the log already holds, so a Run that crashed
mid-Validation or mid-Assessment resumes exactly where it stopped and never runs a recorded Episode
twice. The results are Events (``candidate-selected`` holds every Candidate's score): the run state
folds them, and ``run``, ``resume`` and ``replay`` all summarise them from there.

All Candidates run the same validation Episodes; the selected one is the best by score (respecting
the Benchmark's score direction), then fewer Policy failures, then earlier finish position (the rule of
``projections.scoring.rank_key``, which the run state and the audit rank with too). Only the
selected Program is assessed, on the held-out split. Every fact here is a ``host`` Event and never
reaches the Agent.

Progress: ``judge_run``'s ``on_judged`` is called once per private Episode that ends, with the phase
(``"validation"`` or ``"assessment"``), the Episodes of that phase done so far (those the log already held
included) and the phase's total, so a caller can draw a real bar; it never sees an Episode's content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

from evoledger.kernel.authoring import score_of
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, Executor, PolicyLimits
from evoledger.kernel.planning import PlannedEpisode
from evoledger.kernel.recording import ObjectSink, validation_event
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.live import LiveRun
from evoledger.kernel.run.private_copies import private_program_copy
from evoledger.kernel.run.records import records_from_views
from evoledger.ledger.errors import InfraError
from evoledger.ledger.events import (
    AssessmentFinished,
    CandidateScore,
    CandidateSelected,
    EpisodeSummary,
    RunEnded,
)
from evoledger.ledger.events.base import EpisodeStatus
from evoledger.ledger.events.run import RunEndReason
from evoledger.projections.run_state import RunState
from evoledger.projections.scoring import rank_candidates

__all__ = [
    "CandidateResult",
    "JudgingError",
    "OnJudged",
    "assessment_event",
    "candidates_for_judging",
    "judge_run",
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
    on_episode: Callable[[EpisodeOutcome], None] | None = None,
) -> list[EpisodeOutcome]:
    """Run private Episodes, retrying infra faults (at most ``_INFRA_RETRIES`` rounds).

    ``on_episode`` is called with each outcome that is final (once per Episode; never for an infra fault that is
    retried).

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
                continue
            elif retries_left > 0 and attempt < _INFRA_RETRIES:
                retries_left -= 1
                retry.append(by_index[outcome.index])
                continue
            else:
                outcomes[outcome.index] = outcome  # past the Candidate's allowance: its own failure
            if on_episode is not None:
                on_episode(outcome)
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


# -- judging a Run ---------------------------------------------------------------------------------------

_END_REASONS: Final[dict[str, RunEndReason]] = {reason: reason for reason in get_args(RunEndReason)}


def _end_reason(state: RunState) -> RunEndReason:
    """Why the Run ends once judged: ``finished``, else how the Agent's last attempt ended (an end reason)."""
    if state.finished:
        return "finished"
    return _END_REASONS.get(state.agent_exit_reason or "", "agent_exited")


def candidates_for_judging(state: RunState, config: RunConfig, direction: str) -> tuple[tuple[str, ...], bool]:
    """The Candidates to judge and whether the ``best_public`` fallback chose them."""
    if state.finished:
        return state.candidates, False
    if config.fallback == "best_public":
        scored = [state.submissions[s] for s in state.submission_order if state.submissions[s].score is not None]
        if scored:
            best = max(scored, key=lambda v: (v.score if direction == "maximize" else -(v.score or 0.0), -v.position))
            return (best.submission_id,), True
    return (), False


OnJudged = Callable[[str, int, int], None]
"""``judge_run``'s progress callback: (phase ``"validation"`` or ``"assessment"``, Episodes done, total)."""


def _counter(on_judged: OnJudged | None, phase: str, done: int, total: int) -> Callable[[EpisodeOutcome], None] | None:
    """An ``on_episode`` for :func:`run_judged_episodes` that reports ``phase``'s count from ``done`` on."""
    if on_judged is None:
        return None
    count = done

    def ended(_: EpisodeOutcome) -> None:
        nonlocal count
        count += 1
        on_judged(phase, count, total)

    on_judged(phase, count, total)  # the phase starts (a resumed Run: with the Episodes the log already holds)
    return ended


def _pending_validation(live: LiveRun, sid: str) -> list[PlannedEpisode]:
    """The Validation Episodes of Candidate ``sid`` the log does not hold yet."""
    done = live.host.state.validation.get(sid)
    return [p for p in live.plan.validation if done is None or p.spec.index not in done]


def _validate(live: LiveRun, candidates: tuple[str, ...], on_judged: OnJudged | None) -> list[CandidateResult]:
    host, ledger, config, plan = live.host, live.ledger, live.config, live.plan
    results = []
    pending_of = {sid: _pending_validation(live, sid) for sid in candidates}
    total = len(candidates) * len(plan.validation)
    done = total - sum(len(pending) for pending in pending_of.values())
    report = _counter(on_judged, "validation", done, total)
    for position, sid in enumerate(candidates, start=1):
        view = host.state.submissions[sid]
        pending = pending_of[sid]
        if pending:
            allowance = config.infra_refunds.rule.limit(len(plan.validation))
            with private_program_copy(view.program_digest, ledger.objects) as program_dir:
                outcomes = run_judged_episodes(
                    live.executor, pending, program_dir, config.limits, retry_limit=allowance, on_episode=report
                )
            host.append(
                [
                    validation_event(o, ledger.objects, submission_id=sid, program_digest=view.program_digest)
                    for o in outcomes
                ]
            )
        results_so_far = host.state.validation.get(sid)
        views = sorted(results_so_far.items()) if results_so_far is not None else []
        records = records_from_views("validation", views, ledger.objects, traces=0)
        results.append(
            CandidateResult(
                submission_id=sid,
                program_digest=view.program_digest,
                finish_position=position,
                score=score_of(live.benchmark, records) if records else view.score,
                policy_failures=sum(1 for r in records if r.status != "ok"),
            )
        )
    return results


def judge_run(live: LiveRun, *, on_judged: OnJudged | None = None, agent_failure: str | None = None) -> None:
    """Validate, select and assess (whatever the log does not hold yet), then append ``run-ended``.

    ``on_judged(phase, done, total)`` reports each private Episode that ends (see the module docstring).
    ``agent_failure`` says why the Agent's last attempt failed (it could not be started, or it exited with an
    error): unless the Agent finished, the Run then ends ``agent_failed`` and ``run-ended`` records the words.
    """
    host, ledger, config, benchmark, plan = live.host, live.ledger, live.config, live.benchmark, live.plan
    state = host.state
    if state.ended_reason is not None:
        return
    direction = benchmark.spec.score_direction
    candidates, fallback = candidates_for_judging(state, config, direction)
    reason = _end_reason(state)
    message = "best_public fallback selected the Candidate" if fallback else ""
    if agent_failure is not None and not state.finished:
        reason = "agent_failed"
        message = "; ".join(part for part in (agent_failure[:3000], message) if part)
    if candidates:
        try:
            if config.validation.episodes:
                results = _validate(live, candidates, on_judged)
            else:
                only = host.state.submissions[candidates[0]]
                results = [
                    CandidateResult(only.submission_id, only.program_digest, 1, only.score, only.policy_failures)
                ]
        except InfraError as exc:
            host.append([RunEnded(reason="validation_failed", message=str(exc)[:4000])])
            return
        if host.state.selected is None:
            host.append([select(results, direction, validated=config.validation.episodes > 0)])
        selected = host.state.selected or candidates[0]
        view = host.state.submissions[selected]
        if not host.state.assessed and config.assessment.episodes > 0:
            try:
                with private_program_copy(view.program_digest, ledger.objects) as program_dir:
                    outcomes = run_judged_episodes(
                        live.executor,
                        plan.assessment,
                        program_dir,
                        config.limits,
                        on_episode=_counter(on_judged, "assessment", 0, len(plan.assessment)),
                    )
            except InfraError as exc:
                host.append(
                    [RunEnded(reason="assessment_failed", selected_submission_id=selected, message=str(exc)[:4000])]
                )
                return
            score = score_of(benchmark, [o.to_record(with_trajectory=False) for o in outcomes])
            host.append(
                [
                    assessment_event(
                        submission_id=selected,
                        program_digest=view.program_digest,
                        outcomes=outcomes,
                        score=score,
                        objects=ledger.objects,
                    )
                ]
            )
    s = host.state
    host.append(
        [
            RunEnded(
                reason=reason,
                selected_submission_id=s.selected,
                message=message,
                summary={
                    "budget_used": s.charged - s.refunded,
                    "budget_left": s.budget_left,
                    "submissions": s.submissions_used,
                    "candidates": list(candidates),
                    "assessment_score": s.assessment_score,
                },
            )
        ]
    )
