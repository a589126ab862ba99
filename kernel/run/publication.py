"""Publishing to the Agent: bulk retention and the ``workspace/feedback/`` mirror, kept current per Event.

The mirror and retention projections are folded incrementally from every Event the Host appends. After
each Feedback publication the retention decision is recorded first (``bulk-evicted``), then the bytes are
evicted from the Object store, then the mirror folder is synced, so a crash at any point leaves a log
from which ``evoledger replay --rebuild`` reproduces the same folder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.layout import RunLayout
from evoledger.ledger.errors import InputError
from evoledger.ledger.events import EventBase
from evoledger.ledger.run_files import DIR_OPEN_FLAGS
from evoledger.ledger.store import Ledger
from evoledger.projections import mirror, retention
from evoledger.projections.mirror_files import sync_mirror
from evoledger.projections.mirror_walk import MAX_ENTRIES, WalkLimits, walk
from evoledger.projections.run_state import RunState

__all__ = ["FeedbackPublisher"]


def _count_files(root: Path, expected: int) -> int | None:
    """The non-folder entries under ``root``, or ``None`` when the bounded walk meets garbage or cannot open it."""
    try:
        fd = os.open(root, DIR_OPEN_FLAGS)
    except OSError:
        return None
    try:
        limits = WalkLimits(max_entries=MAX_ENTRIES + 2 * expected)
        count = sum(1 for entry in walk(fd, limits) if not entry.is_dir)
    finally:
        os.close(fd)
    return None if limits.oddities else count


class _Appender(Protocol):
    def append(self, events: Sequence[EventBase]) -> None: ...


class FeedbackPublisher:
    """Folds public Events into the mirror and retention projections and applies their decisions."""

    def __init__(self, *, ledger: Ledger, layout: RunLayout, config: RunConfig, recorded: Sequence[EventBase]) -> None:
        """``recorded`` is the log's Events so far, already parsed by the caller (folded here, not re-read)."""
        self._ledger = ledger
        self._layout = layout
        self._cap = config.bulk_feedback_retention_bytes
        self.mirror = mirror.fold(recorded)
        self.retention = retention.fold(recorded)
        self._apply_recorded_evictions()  # once: only a crash before this Host started can leave such bytes
        self._synced: mirror.MirrorState | None = None
        self._stamps: dict[str, tuple[int, int, int]] = {}
        self._host: _Appender | None = None

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
        self._sync(full=self._tampered())

    def reconcile(self) -> None:
        """Bring the mirror back in line with the whole disk (e.g. after the Agent exits, before judging)."""
        self._sync(full=True)

    def _sync(self, *, full: bool) -> None:
        """Write the mirror: only what changed since the last sync, or (``full``) reconciled with the whole disk."""
        target = self._layout.feedback
        if target.exists() and not target.is_symlink() and not target.is_dir():
            target.unlink()  # the Agent replaced its Feedback folder by a file: the Host's folder comes back
        previous = None if full else self._synced
        try:
            sync_mirror(self.mirror, target, self._ledger.objects, previous=previous)
        except (InputError, OSError):
            # The Agent keeps replacing its feedback/ folder (or what is in it) while the Host writes: the folder is
            # the Agent's to break, never a Host error. The next sync reconciles with the whole disk again.
            self._synced = None
            self._stamps = {}
            return
        self._synced = self.mirror
        self._stamps = self._stamp_files()

    def _stamp_files(self) -> dict[str, tuple[int, int, int]]:
        stamps = {}
        root = self._layout.feedback
        for rel in self.mirror.files:
            try:
                st = os.lstat(root / rel)
            except OSError:
                continue
            stamps[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return stamps

    def _tampered(self) -> bool:
        """Whether anything under ``feedback/`` changed since the Host last wrote it (stat only: cheap)."""
        root = self._layout.feedback
        if root.is_symlink() or not root.is_dir():
            return True
        for rel, stamp in self._stamps.items():
            try:
                st = os.lstat(root / rel)
            except OSError:
                return True
            if (st.st_size, st.st_mtime_ns, st.st_ino) != stamp:
                return True
        return _count_files(root, len(self._stamps)) != len(self._stamps)

    def _apply_recorded_evictions(self) -> None:
        """Evict bytes the log says are evicted but the store still holds (a crash between the two)."""
        kept = self.retention
        for digest in kept.evicted:
            if digest not in kept.holders and digest not in kept.permanent and self._ledger.objects.has(digest):
                self._ledger.objects.evict(digest)
