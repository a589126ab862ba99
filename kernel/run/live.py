"""A live Run, built in one place: the log folded into the Host and the public projections it keeps current.

``run``, ``resume`` and the tests open a created (or crashed) Run with :meth:`LiveRun.open`, then let the Agent
in, and judge. Opening repairs what a crash between two steps of a publication can leave: bytes the log says are
evicted but the store holds, a ``feedback-published`` whose retention decision was not recorded yet, and a
stale ``feedback/`` folder.
"""

from __future__ import annotations

from dataclasses import dataclass

from evoledger.kernel.authoring import Benchmark
from evoledger.kernel.execution import Executor
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.host import RunHost
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.publication import FeedbackFolder, Publication, evictions
from evoledger.kernel.run.setup import RunPlan
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import fold

__all__ = ["LiveRun"]


@dataclass(frozen=True, slots=True)
class LiveRun:
    """An open Run and its Host. The caller owns ``ledger`` and ``executor`` (and closes them)."""

    ledger: Ledger
    layout: RunLayout
    config: RunConfig
    benchmark: Benchmark
    plan: RunPlan
    executor: Executor
    host: RunHost

    @classmethod
    def open(
        cls,
        *,
        ledger: Ledger,
        layout: RunLayout,
        config: RunConfig,
        benchmark: Benchmark,
        plan: RunPlan,
        executor: Executor,
    ) -> LiveRun:
        """Fold the log once into the Host's run state and public projections, and bring ``feedback/`` up to it."""
        recorded = [r.event for r in ledger.events()]  # parsed once, folded by every projection
        publication = Publication.fold(recorded)
        feedback = FeedbackFolder(layout=layout, objects=ledger.objects)
        feedback.evict_recorded(publication.retention)  # only a crash before this Host started leaves such bytes
        host = RunHost(
            ledger=ledger,
            layout=layout,
            config=config,
            benchmark=benchmark,
            train_pool=plan.train,
            executor=executor,
            state=fold(recorded),
            publication=publication,
            feedback=feedback,
        )
        host.append(evictions(publication, config.bulk_feedback_retention_bytes))  # a crash right after publishing
        host.refresh_feedback()
        return cls(ledger, layout, config, benchmark, plan, executor, host)

    @property
    def session_open(self) -> bool:
        """Whether the Agent's authority is still open (not finished, the Run not ended)."""
        state = self.host.state
        return not state.finished and state.ended_reason is None

    def complete_in_flight(self) -> None:
        """Run and publish the Submissions a crash left in flight (``resume``), then refresh ``feedback/``.

        An unexpected error is recorded like a failed request (``request-failed``) and the Run goes on, so
        that a Submission whose publication keeps failing cannot make every ``resume`` fail the same way.
        """
        host = self.host
        for sid in host.state.submission_order:
            view = host.state.submissions[sid]
            if view.pending or not view.published:
                try:
                    host.run_submission(sid)
                except Exception as error:
                    host.record_failure("submit", {"submission_id": sid}, error, answered=False)
        host.refresh_feedback()
