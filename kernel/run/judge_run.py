"""After Agent authority ends: choose the Candidates, validate, select, assess, and record the Run's end.

Each step reads what the log already holds, so a Run that crashed mid-Validation or mid-Assessment
resumes exactly where it stopped and never runs a recorded Episode twice. The results are Events
(``candidate-selected`` holds every Candidate's score): the run state folds them, and ``run``,
``resume`` and ``replay`` all summarise them from there.
"""

from __future__ import annotations

from typing import Final, get_args

from evoledger.kernel.authoring import Benchmark, score_of
from evoledger.kernel.execution import Executor
from evoledger.kernel.recording import validation_event
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.host import RunHost
from evoledger.kernel.run.judging import CandidateResult, assessment_event, run_judged_episodes, select
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.programs import private_program_copy
from evoledger.kernel.run.records import records_from_views
from evoledger.kernel.run.setup import RunPlan
from evoledger.ledger.errors import InfraError
from evoledger.ledger.events import RunEnded
from evoledger.ledger.events.run import RunEndReason
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import RunState

__all__ = ["candidates_for_judging", "judge_run"]

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


def _validate(
    host: RunHost,
    ledger: Ledger,
    config: RunConfig,
    benchmark: Benchmark,
    plan: RunPlan,
    executor: Executor,
    candidates: tuple[str, ...],
) -> list[CandidateResult]:
    results = []
    for position, sid in enumerate(candidates, start=1):
        view = host.state.submissions[sid]
        done = host.state.validation.get(sid)
        pending = [p for p in plan.validation if done is None or p.spec.index not in done]
        if pending:
            allowance = config.infra_refunds.rule.limit(len(plan.validation))
            with private_program_copy(view.program_digest, ledger.objects) as program_dir:
                outcomes = run_judged_episodes(executor, pending, program_dir, config.limits, retry_limit=allowance)
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
                score=score_of(benchmark, records) if records else view.score,
                policy_failures=sum(1 for r in records if r.status != "ok"),
            )
        )
    return results


def judge_run(
    *,
    host: RunHost,
    ledger: Ledger,
    layout: RunLayout,
    config: RunConfig,
    benchmark: Benchmark,
    plan: RunPlan,
    executor: Executor,
) -> None:
    """Validate, select and assess (whatever the log does not hold yet), then append ``run-ended``."""
    state = host.state
    if state.ended_reason is not None:
        return
    direction = benchmark.spec.score_direction
    candidates, fallback = candidates_for_judging(state, config, direction)
    reason = _end_reason(state)
    message = "best_public fallback selected the Candidate" if fallback else ""
    if candidates:
        try:
            if config.validation.episodes:
                results = _validate(host, ledger, config, benchmark, plan, executor, candidates)
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
                    outcomes = run_judged_episodes(executor, plan.assessment, program_dir, config.limits)
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
