"""Publishing to the Agent: Feedback, bulk retention and the ``workspace/feedback/`` mirror.

What to *record* is decided by pure functions: :func:`feedback_event` is a Submission's ``feedback-published``,
and :func:`publish` folds freshly appended Events into the public projections (:class:`Publication`: mirror and
retention) and returns the ``bulk-evicted`` Events retention then asks for. The Host appends them; nothing
here appends. What is *written* is :class:`FeedbackFolder`'s: it evicts the bytes a recorded ``bulk-evicted``
names and syncs the mirror folder. The order is always record, then evict, then sync, so a crash at any point
leaves a log from which ``evoledger replay --rebuild`` reproduces the same folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evoledger.kernel.authoring import Benchmark, EpisodeSpec, score_of
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.records import records_from_views
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from evoledger.ledger.events import ArtifactRef, BulkEvicted, EventBase, FeedbackPublished
from evoledger.ledger.objects import ObjectStore
from evoledger.ledger.run_files import DIR_OPEN_FLAGS
from evoledger.projections import mirror, retention
from evoledger.projections.mirror_files import sync_mirror
from evoledger.projections.mirror_walk import MAX_ENTRIES, WalkLimits, walk
from evoledger.projections.run_state import RunState

__all__ = ["FeedbackFolder", "Publication", "evictions", "feedback_event", "publish"]


def feedback_event(
    benchmark: Benchmark,
    state: RunState,
    submission_id: str,
    objects: ObjectStore,
    pool: Sequence[EpisodeSpec] = (),
) -> FeedbackPublished:
    """The ``feedback-published`` Event of a Submission whose Episodes are all recorded in ``state``.

    The Benchmark's Feedback is computed from the recorded Episodes (never from process memory); its content
    and Artifacts are stored in ``objects``. ``pool`` (the train pool's specs by index) lets the Benchmark
    re-simulate the traced Episodes, e.g. to render them.
    """
    view = state.submissions[submission_id]
    finished = [(i, view.results[i]) for i in view.episodes if i in view.results]
    specs = {i: pool[i] for i, _ in finished if 0 <= i < len(pool)}
    records = records_from_views("train", finished, objects, specs=specs)
    feedback = benchmark.feedback(records)
    score = score_of(benchmark, records, feedback)
    content_digest = objects.put(canonical_json(dict(feedback.content)))
    artifacts = tuple(
        ArtifactRef(
            name=a.name, media_type=a.media_type, digest=objects.put(a.data), size=len(a.data), retention=a.retention
        )
        for a in feedback.artifacts
    )
    return FeedbackPublished(
        submission_id=submission_id,
        score=score,
        content_digest=content_digest,
        artifacts=artifacts,
        budget_used=state.charged - state.refunded,
        budget_left=state.budget_left,
    )


@dataclass(frozen=True, slots=True)
class Publication:
    """The public projections the Agent's ``feedback/`` is made from: its mirror and bulk retention."""

    mirror: mirror.MirrorState = field(default_factory=mirror.MirrorState)
    retention: retention.RetentionState = field(default_factory=retention.RetentionState)

    @classmethod
    def fold(cls, events: Sequence[EventBase]) -> Publication:
        """Both projections folded from zero over ``events`` (the log so far, already parsed)."""
        return cls(mirror=mirror.fold(events), retention=retention.fold(events))


def evictions(publication: Publication, cap: int) -> tuple[BulkEvicted, ...]:
    """The ``bulk-evicted`` Event that brings retained bulk Feedback within ``cap`` bytes (none when it fits)."""
    event = retention.decide(publication.retention, cap).to_event()
    return () if event is None else (event,)


def publish(
    publication: Publication, events: Sequence[EventBase], cap: int
) -> tuple[Publication, tuple[BulkEvicted, ...]]:
    """Fold freshly appended ``events``; when they publish Feedback, also return the evictions it calls for.

    The returned Events are not folded yet: the Host appends them, and that append folds them here in turn.
    Retention changes only when Feedback is published, so no other append can call for an eviction.
    """
    shown, kept, published = publication.mirror, publication.retention, False
    for event in events:
        shown = mirror.apply(shown, event)
        kept = retention.apply(kept, event)
        published = published or isinstance(event, FeedbackPublished)
    after = Publication(mirror=shown, retention=kept)
    return after, evictions(after, cap) if published else ()


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


class FeedbackFolder:
    """Applies recorded publication decisions to disk: evicts bulk bytes and writes ``workspace/feedback/``."""

    def __init__(self, *, layout: RunLayout, objects: ObjectStore) -> None:
        self._layout = layout
        self._objects = objects
        self._synced: mirror.MirrorState | None = None
        self._stamps: dict[str, tuple[int, int, int]] = {}

    def evict(self, events: Iterable[EventBase]) -> None:
        """Delete the bytes the recorded ``bulk-evicted`` Events among ``events`` evict (after they are recorded)."""
        for event in events:
            if isinstance(event, BulkEvicted):
                self._objects.evict_many([d for d in event.digests if self._objects.has(d)])

    def evict_recorded(self, kept: retention.RetentionState) -> None:
        """Evict bytes the log says are evicted but the store still holds (a crash between the two)."""
        for digest in kept.evicted:
            if digest not in kept.holders and digest not in kept.permanent and self._objects.has(digest):
                self._objects.evict(digest)

    def refresh(self, shown: mirror.MirrorState) -> None:
        """Bring the folder up to ``shown``: only what changed, unless the Agent touched the folder since."""
        self._sync(shown, full=self._tampered())

    def reconcile(self, shown: mirror.MirrorState) -> None:
        """Bring the folder back in line with ``shown`` over the whole disk (e.g. after the Agent exits)."""
        self._sync(shown, full=True)

    def _sync(self, shown: mirror.MirrorState, *, full: bool) -> None:
        """Write the mirror: only what changed since the last sync, or (``full``) reconciled with the whole disk."""
        target = self._layout.feedback
        if target.exists() and not target.is_symlink() and not target.is_dir():
            target.unlink()  # the Agent replaced its Feedback folder by a file: the Host's folder comes back
        previous = None if full else self._synced
        try:
            sync_mirror(shown, target, self._objects, previous=previous)
        except (InputError, OSError):
            # The Agent keeps replacing its feedback/ folder (or what is in it) while the Host writes: the folder is
            # the Agent's to break, never a Host error. The next sync reconciles with the whole disk again.
            self._synced = None
            self._stamps = {}
            return
        self._synced = shown
        self._stamps = self._stamp_files(shown)

    def _stamp_files(self, shown: mirror.MirrorState) -> dict[str, tuple[int, int, int]]:
        stamps = {}
        root = self._layout.feedback
        for rel in shown.files:
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
