"""The Host coordinator: decides every Session request and appends the Events that record it.

Only this object writes the Run's ledger while the Agent has authority (``LiveRun.open`` builds it from the
log). It folds each Event it appends into the run state and the public projections, appending the retention
decisions those return (``kernel.run.publication``); decides ``submit``/``finish``/``status`` from that state
alone; runs a Submission's Episodes through the executor; publishes Feedback; and refreshes the Agent's
``feedback/`` once per request.

Refusals are recorded bounded: the message is cut (``kernel.session.rejections``) and the request is
kept as its digest and prefix (``ledger.events.request_summary``); finish's checks are linear in the
number of ids. An unexpected error while deciding a request is recorded by :meth:`RunHost.record_failure`
(``request-failed``, host only) for the coordinator loop to answer ``internal_error``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Final

from evoledger.kernel.agents.agent_skills import SKILLS_DIR
from evoledger.kernel.authoring import Benchmark
from evoledger.kernel.execution import EpisodeTask, Executor
from evoledger.kernel.planning import PlannedEpisode
from evoledger.kernel.recording import outcome_events
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.crash_points import CrashPoint
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.private_copies import private_program_copy
from evoledger.kernel.run.publication import FeedbackFolder, Publication, feedback_event, publish
from evoledger.kernel.run.request_failures import LEDGER_FAILURES, failure_events
from evoledger.kernel.session import (
    FinishParams,
    Rejection,
    RejectionCode,
    SelectorError,
    SubmitParams,
    check_in_pool,
    parse_selector,
)
from evoledger.kernel.session.answers import (
    EpisodeAnswer,
    FinishAnswer,
    SessionAnswer,
    StatusAnswer,
    SubmissionAnswer,
    SubmitAnswer,
)
from evoledger.ledger.errors import SnapshotError
from evoledger.ledger.events import (
    EpisodeStarted,
    EventBase,
    FinishAccepted,
    FinishRejected,
    SubmissionAccepted,
    SubmissionRejected,
    request_summary,
)
from evoledger.ledger.snapshots import ProgramSnapshot, snapshot_program
from evoledger.ledger.store import Ledger
from evoledger.projections.refunds import refund_units
from evoledger.projections.run_state import RunState, apply

__all__ = ["RunHost", "submission_id_for"]

_SHOWN_IDS: Final = 5
"""How many offending submission ids a finish rejection quotes (the rest are counted)."""

_SNAPSHOT_SETTLE_SECONDS = 0.1
"""A submitted Program is captured only once no file changed for this long (a torn write is never taken)."""


def submission_id_for(position: int) -> str:
    """The id of the ``position``-th accepted Submission (1-based): ``submission-000001``."""
    return f"submission-{position:06d}"


class RunHost:
    """Decides Session requests for one Run. Not thread-safe: call it from the coordinator thread only."""

    def __init__(
        self,
        *,
        ledger: Ledger,
        layout: RunLayout,
        config: RunConfig,
        benchmark: Benchmark,
        train_pool: Sequence[PlannedEpisode],
        executor: Executor,
        state: RunState,
        publication: Publication,
        feedback: FeedbackFolder,
    ) -> None:
        """``state`` and ``publication`` are the projections folded from the log so far."""
        self._ledger = ledger
        self._layout = layout
        self._config = config
        self._benchmark = benchmark
        self._pool = list(train_pool)
        self._executor = executor
        self.state = state
        self.publication = publication
        self._feedback = feedback
        self._crash_point = CrashPoint.from_env()

    # ------------------------------------------------------------------------------------------ recording

    def append(self, events: Sequence[EventBase]) -> None:
        """Append ``events`` atomically and fold them; then record and apply the evictions they call for."""
        if not events:
            return
        self._ledger.append(events)
        for event in events:
            self.state = apply(self.state, event)
        self.publication, evictions = publish(self.publication, events, self._config.bulk_feedback_retention_bytes)
        if self._crash_point is not None:
            self._crash_point.observe(events)
        self._feedback.evict(events)  # the bytes of a bulk-evicted among them go only once it is recorded
        self.append(evictions)

    def refresh_feedback(self, *, full: bool = False) -> None:
        """Bring the Agent's ``feedback/`` up to the log (``full``: reconciled with the whole folder)."""
        if full:
            self._feedback.reconcile(self.publication.mirror)
        else:
            self._feedback.refresh(self.publication.mirror)

    def _reject_submission(
        self, code: RejectionCode, message: str, request: dict[str, Any], retryable: bool = False
    ) -> Rejection:
        rejection = Rejection(code, message, retryable)  # bounds the message
        summary = request_summary(request)
        self.append([SubmissionRejected(code=code, message=rejection.message, retryable=retryable, request=summary)])
        return rejection

    def _reject_finish(
        self, code: RejectionCode, message: str, request: dict[str, Any], retryable: bool = False
    ) -> Rejection:
        rejection = Rejection(code, message, retryable)  # bounds the message
        summary = request_summary(request)
        self.append([FinishRejected(code=code, message=rejection.message, retryable=retryable, request=summary)])
        return rejection

    def record_failure(self, method: str, params: Any, error: Exception, *, answered: bool = True) -> Rejection:
        """Record that deciding a ``method`` request raised ``error`` (``kernel.run.request_failures``).

        Returns the ``internal_error`` to answer; the Run goes on. A failure of the ledger itself, or one
        that keeps this record from being appended, is raised instead: the Host stops (``resume`` goes on).
        """
        if isinstance(error, LEDGER_FAILURES):
            raise error
        rejection, events = failure_events(method, params, error, answered=answered)
        try:
            self.append(events)
        except Exception as failure:
            raise error from failure
        if answered:
            # the Agent's rejections.json shows it; a failure here is most likely the same fault again (recorded
            # already), and the mirror is reconciled before judging
            with contextlib.suppress(Exception):
                self.refresh_feedback()
        return rejection

    # -------------------------------------------------------------------------------------------- status

    def status(self) -> StatusAnswer:
        """The read-only ``status`` answer: budget, limits and the Submissions so far."""
        s = self.state
        return StatusAnswer(
            budget_total=s.episode_budget,
            budget_used=s.charged - s.refunded,
            budget_left=s.budget_left,
            submissions_used=s.submissions_used,
            submissions_left=s.submissions_left,
            max_submissions=s.max_submissions,
            pool_size=self._config.pool_size,
            max_episodes_per_submission=self._config.episodes_per_submission,
            max_candidates=self._config.candidate_limit,
            finish_budget_policy=self._config.finish_budget_policy,
            score_direction=self._benchmark.spec.score_direction,
            primary_metric=self._benchmark.spec.primary_metric,
            finished=s.finished,
            submissions=[
                SubmissionAnswer(submission_id=v.submission_id, score=v.score, episodes=len(v.episodes))
                for v in (s.submissions[sid] for sid in s.submission_order)
            ],
        )

    # -------------------------------------------------------------------------------------------- submit

    def _check_budget(self, indices: tuple[int, ...], request: dict[str, Any]) -> None:
        s, n = self.state, len(indices)
        if s.submissions_left == 0:
            raise self._reject_submission(
                "submission_limit", f"all {s.max_submissions} submissions are used; finish with your best ones", request
            )
        if n > self._config.episodes_per_submission:
            raise self._reject_submission(
                "episode_limit",
                f"the submission selects {n} Episodes; at most {self._config.episodes_per_submission} per submission",
                request,
            )
        if s.budget_left == 0 or n > s.budget_left:
            raise self._reject_submission(
                "budget_exhausted", f"the submission costs {n} Episodes but {s.budget_left} remain", request
            )
        if self._config.finish_budget_policy == "require_budget_exhaustion":
            after, later = s.budget_left - n, s.submissions_left - 1
            if after > later * self._config.episodes_per_submission:
                raise self._reject_submission(
                    "budget_allocation",
                    f"after this submission {after} Episodes would remain but at most "
                    f"{later * self._config.episodes_per_submission} can still be spent in {later} submissions; "
                    "select more Episodes",
                    request,
                )

    def _snapshot(self, program: str, request: dict[str, Any]) -> ProgramSnapshot:
        workspace, path = self._layout.workspace.resolve(), f"program path {program[:200]!r}"
        try:
            candidate = (workspace / program).resolve()
        except (ValueError, OSError) as exc:  # NUL (refused by the protocol already), ENAMETOOLONG, ELOOP
            raise self._reject_submission("program_invalid", f"{path} cannot be resolved: {exc}", request) from None
        if not candidate.is_relative_to(workspace):
            raise self._reject_submission(
                "program_invalid", f"{path} is outside the workspace; submit e.g. 'program'", request
            )
        skills = workspace / SKILLS_DIR
        if skills.is_relative_to(candidate) or candidate.is_relative_to(skills):
            raise self._reject_submission(
                "program_invalid",
                f"{path} holds the read-only guides of {SKILLS_DIR}/, which are never part of a Program; "
                "submit e.g. 'program'",
                request,
            )
        try:
            candidate.is_dir()  # ENAMETOOLONG (a name over 255 bytes) and the like surface here
        except OSError as exc:
            message = f"{path} cannot be opened: {exc.strerror}"
            raise self._reject_submission("program_invalid", message, request) from None
        try:
            return snapshot_program(
                candidate, self._ledger.objects, settle_seconds=_SNAPSHOT_SETTLE_SECONDS, within=workspace
            )
        except SnapshotError as exc:
            raise self._reject_submission("program_invalid", str(exc), request) from None

    def submit(self, params: SubmitParams) -> SubmitAnswer:
        """Decide a ``submit`` request; run its Episodes and publish Feedback when accepted."""
        request = {"program": params.program, "episodes": params.episodes}
        if self.state.finished or self.state.ended_reason is not None:
            raise self._reject_submission("session_closed", "the Session is finished; no more submissions", request)
        try:
            indices = parse_selector(params.episodes)
        except SelectorError as exc:
            raise self._reject_submission("invalid_request", str(exc), request) from None
        try:
            check_in_pool(indices, self._config.pool_size)
        except SelectorError as exc:
            raise self._reject_submission("episode_limit", str(exc), request) from None
        self._check_budget(indices, request)
        snapshot = self._snapshot(params.program, request)
        s = self.state
        submission_id = submission_id_for(s.submissions_used + 1)
        self.append(
            [
                snapshot.to_event("submission"),
                SubmissionAccepted(
                    submission_id=submission_id,
                    program_digest=snapshot.digest,
                    episodes=indices,
                    budget_before=s.budget_left,
                    budget_after=s.budget_left - len(indices),
                    submissions_used=s.submissions_used + 1,
                ),
                *(EpisodeStarted(submission_id=submission_id, split="train", index=i) for i in indices),
            ]
        )
        return self.run_submission(submission_id)

    def run_submission(self, submission_id: str) -> SubmitAnswer:
        """Run the pending Episodes of an accepted Submission, then publish its Feedback.

        Also used by ``resume`` to complete a Submission whose Episodes were in flight at a crash
        (:meth:`evoledger.kernel.run.live.LiveRun.complete_in_flight`).
        """
        view = self.state.submissions[submission_id]
        with private_program_copy(view.program_digest, self._ledger.objects) as program_dir:
            tasks = [
                EpisodeTask(
                    episode=self._pool[i].spec,
                    program_dir=program_dir,
                    policy_seed=self._pool[i].policy_seed,
                    limits=self._config.limits,
                )
                for i in view.pending
            ]
            for outcome in self._executor.run(tasks):
                refund = outcome.status == "infra_fault" and self._refundable(submission_id)
                suspicious = outcome.status == "infra_fault" and not refund
                self.append(
                    outcome_events(
                        outcome, self._ledger.objects, submission_id=submission_id, refund=refund, suspicious=suspicious
                    )
                )
        return self._publish(submission_id)

    def _refundable(self, submission_id: str) -> bool:
        """Whether the Submission's next infra fault is refunded (``projections.refunds``) or charged as suspicious."""
        s = self.state
        view = s.submissions[submission_id]
        units = refund_units(
            self._config.infra_refunds.rule,
            submission_episodes=len(view.episodes),
            submission_refunds=view.refunded,
            run_refunds=s.refunded,
            budget=s.episode_budget,
        )
        return units == 1

    def _publish(self, submission_id: str) -> SubmitAnswer:
        published = feedback_event(
            self._benchmark, self.state, submission_id, self._ledger.objects, [p.spec for p in self._pool]
        )
        self.append([published])
        s = self.state
        view = s.submissions[submission_id]
        return SubmitAnswer(
            submission_id=submission_id,
            score=published.score,
            episodes=[
                EpisodeAnswer(index=i, status=r.status, episode_return=r.episode_return, steps=r.steps)
                for i, r in sorted(view.results.items())
            ],
            infra_faults=sorted(view.infra_faulted),
            budget_used=s.charged - s.refunded,
            budget_left=s.budget_left,
            submissions_left=s.submissions_left,
            feedback=f"feedback/{submission_id}/feedback.json",
        )

    # -------------------------------------------------------------------------------------------- finish

    def finish(self, params: FinishParams) -> FinishAnswer:
        """Decide a ``finish`` request; on acceptance Agent authority ends. Every check is linear."""
        s = self.state
        candidates = list(params.candidates)
        request: dict[str, Any] = {"candidates": candidates}
        if s.finished or s.ended_reason is not None:
            raise self._reject_finish("session_closed", "the Session is already finished", request)
        if not candidates:
            raise self._reject_finish(
                "invalid_request", "finish names no Candidate; e.g. finish submission-000001", request
            )
        if s.budget_left > 0 and self._config.finish_budget_policy == "require_budget_exhaustion":
            raise self._reject_finish(
                "budget_remaining",
                f"{s.budget_left} Episodes of budget remain and this Run requires spending them before finish",
                request,
                retryable=True,
            )
        seen: set[str] = set()
        duplicates: dict[str, None] = {}  # insertion-ordered set
        for candidate in candidates:
            if candidate in seen:
                duplicates[candidate] = None
            seen.add(candidate)
        if duplicates:
            raise self._reject_finish(
                "duplicate_submission", f"finish names {_some(sorted(duplicates))} more than once", request
            )
        unknown = [c for c in candidates if c not in s.submissions]
        if unknown:
            known = ", ".join(s.submission_order[-5:]) or "none yet"
            raise self._reject_finish(
                "unknown_submission", f"no accepted submission {_some(unknown)}; known: {known}", request
            )
        unpublished = [c for c in candidates if not s.submissions[c].published]
        if unpublished:  # its request failed inside the Host before Feedback was published
            raise self._reject_finish(
                "unknown_submission",
                f"submission {_some(unpublished)} has no published Feedback (its request failed inside the Host) "
                "and cannot be a Candidate; name another",
                request,
            )
        if len(candidates) > self._config.candidate_limit:
            raise self._reject_finish(
                "candidate_limit",
                f"finish names {len(candidates)} Candidates; this Run allows {self._config.candidate_limit}",
                request,
            )
        self.append([FinishAccepted(candidates=tuple(candidates), budget_left=s.budget_left)])
        return FinishAnswer(finished=True, candidates=candidates, budget_left=s.budget_left)

    # ------------------------------------------------------------------------------------------ dispatch

    def handle(self, method: str, params: Any) -> SessionAnswer:
        """Dispatch one validated request (``params`` is the method's params model)."""
        if method == "status":
            return self.status()
        try:
            if method == "submit":
                return self.submit(params)
            if method == "finish":
                return self.finish(params)
        finally:  # once per request, before the answer: rejections and finish are public facts too
            self.refresh_feedback()
        raise Rejection("invalid_request", f"unknown method {method!r}; use submit, finish or status")


def _some(ids: Sequence[str]) -> str:
    """The first few of ``ids`` and how many more there are (a rejection message stays short)."""
    shown = list(ids[:_SHOWN_IDS])
    more = len(ids) - len(shown)
    return f"{shown}" + (f" and {more} more" if more else "")
