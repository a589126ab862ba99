"""Publishing to the Agent: bulk retention and the ``workspace/feedback/`` mirror, kept current per Event.

The mirror and retention projections are folded incrementally from every Event the Host appends. After
each Feedback publication the retention decision is recorded first (``bulk-evicted``), then the bytes are
evicted from the Object store, then the mirror folder is synced, so a crash at any point leaves a log
from which ``evoledger replay --rebuild`` reproduces the same folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.layout import RunLayout
from evoledger.ledger.events import EventBase
from evoledger.ledger.store import Ledger
from evoledger.projections import mirror, retention
from evoledger.projections.mirror_files import sync_mirror
from evoledger.projections.run_state import RunState

__all__ = ["FeedbackPublisher"]


class _Appender(Protocol):
    def append(self, events: Sequence[EventBase]) -> None: ...


class FeedbackPublisher:
    """Folds public Events into the mirror and retention projections and applies their decisions."""

    def __init__(self, *, ledger: Ledger, layout: RunLayout, config: RunConfig, state: RunState) -> None:
        self._ledger = ledger
        self._layout = layout
        self._cap = config.bulk_feedback_retention_bytes
        recorded = [r.event for r in ledger.events()]
        self.mirror = mirror.fold(recorded)
        self.retention = retention.fold(recorded)
        self._synced: mirror.MirrorState | None = None
        self._host: _Appender | None = None
        del state  # the run state is the Host's; kept in the signature for symmetry with on_published

    def bind(self, host: _Appender) -> None:
        """The Host through which eviction Events are appended."""
        self._host = host

    def observe(self, events: Sequence[EventBase]) -> None:
        """Fold freshly appended Events (the Host's after-append hook)."""
        for event in events:
            self.mirror = mirror.apply(self.mirror, event)
            self.retention = retention.apply(self.retention, event)

    def refresh(self, state: RunState) -> None:
        """Apply retention (record, then evict) and bring the mirror folder up to date."""
        del state
        decision = retention.decide(self.retention, self._cap)
        event = decision.to_event()
        if event is not None and self._host is not None:
            self._host.append([event])
            self._ledger.objects.evict_many([d for d in decision.digests if self._ledger.objects.has(d)])
        self._apply_recorded_evictions()
        sync_mirror(self.mirror, self._layout.feedback, self._ledger.objects, previous=self._synced)
        self._synced = self.mirror

    def _apply_recorded_evictions(self) -> None:
        """Evict bytes the log says are evicted but the store still holds (a crash between the two)."""
        kept = self.retention
        for digest in kept.evicted:
            if digest not in kept.holders and digest not in kept.permanent and self._ledger.objects.has(digest):
                self._ledger.objects.evict(digest)
