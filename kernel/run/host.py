"""The Host coordinator: decides every Session request and appends the Events that record it.

Only this object writes the Run's ledger while the Agent has authority. It keeps the run-state
projection current by folding each Event it appends, decides ``submit``/``finish``/``status`` from
that state alone, runs a Submission's Episodes through the executor, publishes Feedback, applies
bulk retention and refreshes the Agent's ``feedback/`` mirror.

Refusals are recorded bounded: the message is cut (``kernel.session.rejections``) and the request is
kept as its digest and prefix (``ledger.events.request_summary``); finish's checks are linear in the
number of ids. An unexpected error while deciding a request is recorded by :meth:`RunHost.record_failure`
(``request-failed``, host only) for the coordinator loop to answer ``internal_error``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from evoledger.kernel.authoring import Benchmark, score_of
from evoledger.kernel.execution import EpisodeTask, Executor
from evoledger.kernel.planning import PlannedEpisode
from evoledger.kernel.recording import outcome_events
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.crash_points import CrashPoint
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.private_copies import private_program_copy
from evoledger.kernel.run.records import records_from_views
from evoledger.kernel.run.request_failures import LEDGER_FAILURES, failure_events
from evoledger.kernel.session import FinishParams, Rejection, SelectorError, SubmitParams, check_in_pool, parse_selector
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import SnapshotError
from evoledger.ledger.events import (
    ArtifactRef,
    EpisodeStarted,
    EventBase,
    FeedbackPublished,
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
        on_published: Callable[[RunState], None] | None = None,
        after_append: Callable[[Sequence[EventBase]], None] | None = None,
    ) -> None:
        self._ledger = ledger
        self._layout = layout
        self._config = config
        self._benchmark = benchmark
        self._pool = list(train_pool)
        self._executor = executor
        self.state = state
        self._on_published = on_published
        self._after_append = after_append
        self._crash_point = CrashPoint.from_env()

    # ------------------------------------------------------------------------------------------ recording

    def append(self, events: Sequence[EventBase]) -> None:
        """Append ``events`` atomically and fold them into the run state."""
        if not events:
            return
        self._ledger.append(events)
        for event in events:
            self.state = apply(self.state, event)
        if self._after_append is not None:
            self._after_append(events)
        if self._crash_point is not None:
            self._crash_point.observe(events)

    def _reject_submission(
        self, code: str, message: str, request: dict[str, Any], retryable: bool = False
    ) -> Rejection:
        rejection = Rejection(code, message, retryable)  # type: ignore[arg-type]  # bounds the message
        summary = request_summary(request)
        self.append([SubmissionRejected(code=code, message=rejection.message, retryable=retryable, request=summary)])
        return rejection

    def _reject_finish(self, code: str, message: str, request: dict[str, Any], retryable: bool = False) -> Rejection:
        rejection = Rejection(code, message, retryable)  # type: ignore[arg-type]  # bounds the message
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
        if answered and self._on_published is not None:
            # the Agent's rejections.json shows it; a failure here is most likely the same fault again (recorded
            # already), and the mirror is reconciled before judging
            with contextlib.suppress(Exception):
                self._on_published(self.state)
        return rejection

    # -------------------------------------------------------------------------------------------- status

    def status(self) -> dict[str, Any]:
        """The read-only ``status`` answer: budget, limits and the Submissions so far."""
        s = self.state
        return {
            "budget_total": s.episode_budget,
            "budget_used": s.charged - s.refunded,
            "budget_left": s.budget_left,
            "submissions_used": s.submissions_used,
            "submissions_left": s.submissions_left,
            "max_submissions": s.max_submissions,
            "pool_size": self._config.pool_size,
            "max_episodes_per_submission": self._config.episodes_per_submission,
            "max_candidates": self._config.candidate_limit,
            "finish_budget_policy": self._config.finish_budget_policy,
            "score_direction": self._benchmark.spec.score_direction,
            "primary_metric": self._benchmark.spec.primary_metric,
            "finished": s.finished,
            "submissions": [
                {"submission_id": v.submission_id, "score": v.score, "episodes": len(v.episodes)}
                for v in (s.submissions[sid] for sid in s.submission_order)
            ],
        }

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
        workspace = self._layout.workspace.resolve()
        try:
            candidate = (workspace / program).resolve()
        except (ValueError, OSError) as exc:  # NUL (refused by the protocol already), ENAMETOOLONG, ELOOP
            raise self._reject_submission(
                "program_invalid", f"program path {program[:200]!r} cannot be resolved: {exc}", request
            ) from None
        if not candidate.is_relative_to(workspace):
            raise self._reject_submission(
                "program_invalid",
                f"program path {program[:200]!r} is outside the workspace; submit e.g. 'program'",
                request,
            )
        try:
            candidate.is_dir()  # ENAMETOOLONG (a name over 255 bytes) and the like surface here
        except OSError as exc:
            raise self._reject_submission(
                "program_invalid", f"program path {program[:200]!r} cannot be opened: {exc.strerror}", request
            ) from None
        try:
            return snapshot_program(
                candidate, self._ledger.objects, settle_seconds=_SNAPSHOT_SETTLE_SECONDS, within=workspace
            )
        except SnapshotError as exc:
            raise self._reject_submission("program_invalid", str(exc), request) from None

    def submit(self, params: SubmitParams) -> dict[str, Any]:
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

    def complete_submission(self, submission_id: str) -> None:
        """Finish the work of a Submission left in flight (``resume``): run its pending Episodes, publish.

        An unexpected error is recorded like a failed request (``request-failed``) and the Run goes on, so
        that a Submission whose publication keeps failing cannot make every ``resume`` fail the same way.
        """
        try:
            self.run_submission(submission_id)
        except Exception as error:
            self.record_failure("submit", {"submission_id": submission_id}, error, answered=False)

    def run_submission(self, submission_id: str) -> dict[str, Any]:
        """Run the pending Episodes of an accepted Submission, then publish its Feedback.

        Also used by ``resume`` to complete a Submission whose Episodes were in flight at a crash.
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

    def _publish(self, submission_id: str) -> dict[str, Any]:
        view = self.state.submissions[submission_id]
        finished = [(i, view.results[i]) for i in view.episodes if i in view.results]
        records = records_from_views("train", finished, self._ledger.objects)
        feedback = self._benchmark.feedback(records)
        score = score_of(self._benchmark, records, feedback)
        objects = self._ledger.objects
        content_digest = objects.put(canonical_json(dict(feedback.content)))
        artifacts = tuple(
            ArtifactRef(
                name=a.name,
                media_type=a.media_type,
                digest=objects.put(a.data),
                size=len(a.data),
                retention=a.retention,
            )
            for a in feedback.artifacts
        )
        s = self.state
        self.append(
            [
                FeedbackPublished(
                    submission_id=submission_id,
                    score=score,
                    content_digest=content_digest,
                    artifacts=artifacts,
                    budget_used=s.charged - s.refunded,
                    budget_left=s.budget_left,
                )
            ]
        )
        if self._on_published is not None:
            self._on_published(self.state)
        view = self.state.submissions[submission_id]
        return {
            "submission_id": submission_id,
            "score": score,
            "episodes": [
                {"index": i, "status": r.status, "return": r.episode_return, "steps": r.steps}
                for i, r in sorted(view.results.items())
            ],
            "infra_faults": sorted(view.infra_faulted),
            "budget_used": self.state.charged - self.state.refunded,
            "budget_left": self.state.budget_left,
            "submissions_left": self.state.submissions_left,
            "feedback": f"feedback/{submission_id}/feedback.json",
        }

    # -------------------------------------------------------------------------------------------- finish

    def finish(self, params: FinishParams) -> dict[str, Any]:
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
        return {"finished": True, "candidates": candidates, "budget_left": s.budget_left}

    # ------------------------------------------------------------------------------------------ dispatch

    def handle(self, method: str, params: Any) -> dict[str, Any]:
        """Dispatch one validated request (``params`` is the method's params model)."""
        if method == "status":
            return self.status()
        try:
            if method == "submit":
                return self.submit(params)
            if method == "finish":
                return self.finish(params)
        finally:  # rejections and finish are public facts too: the Agent's mirror shows them
            if self._on_published is not None:
                self._on_published(self.state)
        raise Rejection("invalid_request", f"unknown method {method!r}; use submit, finish or status")


def _some(ids: Sequence[str]) -> str:
    """The first few of ``ids`` and how many more there are (a rejection message stays short)."""
    shown = list(ids[:_SHOWN_IDS])
    more = len(ids) - len(shown)
    return f"{shown}" + (f" and {more} more" if more else "")
