"""The bulk-retention projection: which bulk Artifacts are retained, and which to evict next.

A pure fold over ``feedback-published`` (bulk Artifacts with their sizes, Submission by Submission
in publication order) and ``bulk-evicted``; every other Event leaves the state unchanged.

**Counting rule.** ``bulk_feedback_retention_bytes`` covers the Host record *and* the Agent mirror,
so each retained bulk Artifact counts its raw size twice (:data:`COPIES`): once for the Host's
Object store and once for its file in ``workspace/feedback/``. The rule is per Artifact, even when
two Artifacts share an Object (the mirror holds one file per Artifact; the Host's share is
over-counted, which only errs towards evicting earlier). Permanent Artifacts, compact Feedback and
``analysis/`` never count and are never evicted.

**Eviction semantics.** Bytes belong to digests, so a ``bulk-evicted`` event evicts every retained
bulk Artifact published before it with a listed digest, whatever Submission it belongs to. An
Artifact published later with the same digest is retained again (publishing restores the bytes).

**Decision** (:func:`decide`). Over the cap, Submissions join the eviction set oldest first, one at
a time, until the retained bulk bytes fit. A digest is evicted once every retained bulk Artifact
holding it belongs to a Submission in the set, unless it is *pinned*: named by any permanent
Artifact, or by any Artifact of the newest Submission, which is never evicted. So a digest shared
with a younger, still-retained Submission waits for that Submission's turn, and the newest
Submission's Artifacts are always kept (:attr:`EvictionDecision.newest_alone_exceeds` says when
they alone exceed the cap). Decisions are deterministic: digests in the order they were released.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Final

from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import BulkEvicted, EventBase, FeedbackPublished
from immutables import Map

__all__ = [
    "COPIES",
    "BulkArtifact",
    "EvictionDecision",
    "RetentionState",
    "SubmissionRetention",
    "apply",
    "counted_bytes",
    "decide",
    "fold",
]

COPIES: Final = 2
"""How many times a retained bulk Artifact's raw size counts: the Host's Object store and the Agent mirror."""


def counted_bytes(raw_size: int) -> int:
    """The bytes a bulk Artifact of ``raw_size`` raw bytes counts against the retention cap."""
    return COPIES * raw_size


@dataclass(frozen=True, slots=True)
class BulkArtifact:
    """One retained bulk Artifact of a Submission."""

    submission_id: str
    name: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class SubmissionRetention:
    """One published Submission's retention state."""

    submission_id: str
    position: int
    """0 for the first published Submission, then 1, 2, ..."""
    bulk: Map[str, BulkArtifact] = field(default_factory=Map)
    """The retained (not yet evicted) bulk Artifacts by name."""
    digests: frozenset[str] = frozenset()
    """Every Artifact digest this Submission published, whatever its retention."""
    retained_raw: int = 0

    @property
    def bulk_bytes(self) -> int:
        """The bytes this Submission's retained bulk Artifacts count against the cap."""
        return counted_bytes(self.retained_raw)


@dataclass(frozen=True, slots=True)
class RetentionState:
    """Retained bulk Artifacts per Submission, evicted digests and byte totals."""

    order: Map[int, str] = field(default_factory=Map)
    """Publication position -> Submission id."""
    submissions: Map[str, SubmissionRetention] = field(default_factory=Map)
    holders: Map[str, frozenset[tuple[str, str]]] = field(default_factory=Map)
    """Object digest -> the retained bulk Artifacts ``(submission_id, name)`` holding it."""
    permanent: Map[str, bool] = field(default_factory=Map)
    """Digests of every permanent Artifact published (a set; never evicted)."""
    evicted: Map[str, int] = field(default_factory=Map)
    """Evicted digest -> how many times it was evicted (more than once if republished in between)."""
    retained_raw: int = 0
    freed_bytes: int = 0
    """Counted bytes evicted so far (the same rule as :attr:`bulk_bytes`)."""

    @property
    def bulk_bytes(self) -> int:
        """The bytes the retained bulk Artifacts count against the cap (:data:`COPIES` x raw size)."""
        return counted_bytes(self.retained_raw)

    @property
    def newest(self) -> SubmissionRetention | None:
        """The most recently published Submission (never evicted), if any."""
        if not self.order:
            return None
        return self.submissions[self.order[len(self.order) - 1]]

    def retained(self) -> Iterable[BulkArtifact]:
        """Every retained bulk Artifact, oldest Submission first, by name within a Submission."""
        for position in range(len(self.order)):
            sub = self.submissions[self.order[position]]
            for name in sorted(sub.bulk.keys()):
                yield sub.bulk[name]


@dataclass(frozen=True, slots=True)
class EvictionDecision:
    """What to evict to get within ``cap_bytes`` (nothing when ``digests`` is empty)."""

    digests: tuple[str, ...]
    submission_ids: tuple[str, ...]
    """Submissions with at least one Artifact evicted by this decision, oldest first."""
    bytes_freed: int
    """Counted bytes freed (the :data:`COPIES` rule)."""
    newest_alone_exceeds: bool
    """The newest Submission's bulk Artifacts alone count more than the cap (they are kept anyway)."""
    bytes_before: int = 0
    cap_bytes: int = 0

    def to_event(self) -> BulkEvicted | None:
        """The ``bulk-evicted`` Event recording this decision, or ``None`` when it evicts nothing."""
        if not self.digests:
            return None
        reason = (
            f"bulk Feedback counted {self.bytes_before} bytes (raw size x{COPIES}), over the cap of "
            f"{self.cap_bytes} bytes; evicted the bulk Artifacts of the oldest Submissions"
        )
        if self.newest_alone_exceeds:
            reason += "; the newest Submission alone exceeds the cap and is kept"
        return BulkEvicted(
            digests=self.digests, submission_ids=self.submission_ids, reason=reason, bytes_freed=self.bytes_freed
        )


# -- the fold -------------------------------------------------------------------------------------------


def _feedback_published(state: RetentionState, e: FeedbackPublished) -> RetentionState:
    if e.submission_id in state.submissions:
        return state  # a repeated publication: the first one wins
    sid = e.submission_id
    bulk: dict[str, BulkArtifact] = {}
    with state.holders.mutate() as holders, state.permanent.mutate() as permanent:
        for a in e.artifacts:
            if a.retention == "permanent":
                permanent[a.digest] = True
            else:
                bulk[a.name] = BulkArtifact(submission_id=sid, name=a.name, digest=a.digest, size=a.size)
                holders[a.digest] = holders.get(a.digest, frozenset()) | {(sid, a.name)}
        new_holders, new_permanent = holders.finish(), permanent.finish()
    raw = sum(a.size for a in bulk.values())
    position = len(state.order)
    sub = SubmissionRetention(
        submission_id=sid,
        position=position,
        bulk=Map(bulk),
        digests=frozenset(a.digest for a in e.artifacts),
        retained_raw=raw,
    )
    return replace(
        state,
        order=state.order.set(position, sid),
        submissions=state.submissions.set(sid, sub),
        holders=new_holders,
        permanent=new_permanent,
        retained_raw=state.retained_raw + raw,
    )


def _bulk_evicted(state: RetentionState, e: BulkEvicted) -> RetentionState:
    changed: dict[str, SubmissionRetention] = {}
    removed = 0
    with state.holders.mutate() as holders, state.evicted.mutate() as evicted:
        for digest in e.digests:
            evicted[digest] = evicted.get(digest, 0) + 1
            for sid, name in sorted(holders.get(digest, frozenset())):
                sub = changed[sid] if sid in changed else state.submissions[sid]
                size = sub.bulk[name].size
                changed[sid] = replace(sub, bulk=sub.bulk.delete(name), retained_raw=sub.retained_raw - size)
                removed += size
            if digest in holders:
                del holders[digest]
        new_holders, new_evicted = holders.finish(), evicted.finish()
    submissions = state.submissions
    for sid, sub in changed.items():
        submissions = submissions.set(sid, sub)
    return replace(
        state,
        submissions=submissions,
        holders=new_holders,
        evicted=new_evicted,
        retained_raw=state.retained_raw - removed,
        freed_bytes=state.freed_bytes + counted_bytes(removed),
    )


def apply(state: RetentionState, event: EventBase) -> RetentionState:
    """The retention state after ``event`` (kinds other than the two above change nothing)."""
    if isinstance(event, FeedbackPublished):
        return _feedback_published(state, event)
    if isinstance(event, BulkEvicted):
        return _bulk_evicted(state, event)
    return state


def fold(events: Iterable[EventBase], state: RetentionState | None = None) -> RetentionState:
    """Fold ``events`` from ``state`` (default: from zero)."""
    current = state if state is not None else RetentionState()
    for event in events:
        current = apply(current, event)
    return current


# -- the decision ---------------------------------------------------------------------------------------


def _check_cap(cap_bytes: object) -> int:
    if type(cap_bytes) is not int:
        raise InputError(f"cap_bytes must be an int number of bytes, got {cap_bytes!r}")
    if cap_bytes < 0:
        raise ConfigError(
            f"bulk_feedback_retention_bytes must be >= 0, got {cap_bytes}; use 0 to keep only the newest Submission"
        )
    return cap_bytes


def decide(state: RetentionState, cap_bytes: int) -> EvictionDecision:
    """What to evict so the retained bulk bytes fit in ``cap_bytes`` (see the module docstring)."""
    cap = _check_cap(cap_bytes)
    total = state.bulk_bytes
    newest = state.newest
    newest_exceeds = newest is not None and newest.bulk_bytes > cap
    if total <= cap or newest is None:
        return EvictionDecision((), (), 0, newest_exceeds, bytes_before=total, cap_bytes=cap)
    outside: dict[str, int] = {}  # digest -> retained holders not yet in the eviction set
    released: list[str] = []
    freed = 0
    for position in range(newest.position):
        sub = state.submissions[state.order[position]]
        for name in sorted(sub.bulk.keys()):
            digest = sub.bulk[name].digest
            holders = state.holders[digest]
            left = outside.get(digest, len(holders)) - 1
            outside[digest] = left
            # (the newest's bulk digests never reach 0 holders; its permanent ones are in state.permanent)
            if left == 0 and digest not in state.permanent and digest not in newest.digests:
                released.append(digest)
                freed += counted_bytes(sum(state.submissions[s].bulk[n].size for s, n in holders))
        if total - freed <= cap:
            break
    gone = frozenset(released)
    affected = tuple(
        sid
        for sid in (state.order[p] for p in range(newest.position))
        if any(a.digest in gone for a in state.submissions[sid].bulk.values())
    )
    return EvictionDecision(tuple(released), affected, freed, newest_exceeds, bytes_before=total, cap_bytes=cap)
