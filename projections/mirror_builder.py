"""The batch fold of the Agent mirror: :class:`MirrorBuilder`, what :func:`evoledger.projections.mirror.fold` runs.

Folding with :func:`~evoledger.projections.mirror.apply` rebuilds a frozen Submission and re-renders
its files whenever it changes. The builder instead keeps one private, mutable draft per Submission
(owned by the fold that made it, never shared) and derives the file tree once, in :meth:`build`.
That is equal to folding Event by Event, because in :func:`apply` every change to a published
Submission goes through ``_put_submission``, which leaves exactly that Submission's
:meth:`~evoledger.projections.mirror.MirrorSubmission.files` in the tree (its paths are prefixed
by its id, so Submissions never share one), ``latest.json`` is the latest published Submission's
``feedback.json``, and ``retention.json`` / ``rejections.json`` are rendered from the full
histories. A property-based test checks the equality on generated logs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from evoledger.ledger.events import (
    BulkEvicted,
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    FinishRejected,
    InfraFault,
    SubmissionAccepted,
    SubmissionRejected,
)
from evoledger.ledger.records import Visibility
from evoledger.projections.mirror import (
    LATEST_PATH,
    REJECTIONS_PATH,
    RETENTION_PATH,
    FileSource,
    MirrorArtifact,
    MirrorEpisode,
    MirrorFeedback,
    MirrorState,
    MirrorSubmission,
    _list_file,
    _retention_file,
)
from evoledger.projections.mirror_rejections import append_listed, omitted_note, rejection_record
from immutables import Map

__all__ = ["MirrorBuilder", "fold_from_zero", "mirror_episode"]


def mirror_episode(e: EpisodeFinished) -> MirrorEpisode:
    """The :class:`MirrorEpisode` an ``episode-finished`` Event shows the Agent."""
    failure = e.failure
    if failure is None:
        return MirrorEpisode(e.index, e.status, e.episode_return, e.steps, None, None, None, e.policy_log_digest)
    return MirrorEpisode(
        e.index,
        e.status,
        e.episode_return,
        e.steps,
        failure.code,
        failure.message,
        failure.traceback_digest,
        e.policy_log_digest,
    )


class _Draft:
    """A Submission being folded (a :class:`MirrorSubmission` with mutable results)."""

    __slots__ = ("episodes", "feedback", "infra_faults", "program_digest", "results", "sid")

    def __init__(self, sid: str, program_digest: str, episodes: tuple[int, ...]) -> None:
        self.sid, self.program_digest, self.episodes = sid, program_digest, episodes
        self.results: dict[int, MirrorEpisode] = {}
        self.infra_faults: frozenset[int] = frozenset()
        self.feedback: MirrorFeedback | None = None

    def freeze(self) -> MirrorSubmission:
        return MirrorSubmission(
            self.sid, self.program_digest, self.episodes, Map(self.results), self.infra_faults, self.feedback
        )


class MirrorBuilder:
    """Folds Events into a :class:`MirrorState` from zero; :meth:`build` freezes the result.

    :meth:`add` takes an Event and optionally its stored visibility, exactly like :func:`apply`;
    :meth:`episode_finished` is the same step for an ``episode-finished`` Event stored ``public``,
    given as its :func:`mirror_episode` (the replay check reads it without building the model).
    """

    def __init__(self) -> None:
        self._subs: dict[str, _Draft] = {}
        self._latest: str | None = None
        self._owners: dict[str, set[str]] = {}
        self._evictions: list[bytes] = []
        self._bytes_freed = 0
        self._rejections: Map[int, bytes] = Map()
        self._rejections_total = 0
        self._events = 0

    def add(self, event: EventBase, visibility: Visibility | None = None) -> None:
        """Fold one Event (see :func:`~evoledger.projections.mirror.apply` for ``visibility``)."""
        if visibility is not None and visibility not in ("public", "host"):
            raise InputError(f"visibility must be 'public' or 'host', got {visibility!r}; pass the stored row's value")
        if visibility == "host" or type(event).visibility != "public":
            return
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event)
        self._events += 1

    def episode_finished(self, submission_id: str | None, result: MirrorEpisode) -> None:
        """Fold a public ``episode-finished`` Event of ``submission_id`` showing ``result``."""
        sub = self._subs.get(submission_id) if submission_id is not None else None
        if sub is not None:
            sub.results[result.index] = result
        self._events += 1

    def build(self) -> MirrorState:
        """The folded mirror (the builder may go on folding afterwards)."""
        subs = {sid: draft.freeze() for sid, draft in self._subs.items()}
        evictions: Map[int, bytes] = Map(dict(enumerate(self._evictions)))
        rejections = self._rejections
        files: dict[str, FileSource] = {
            RETENTION_PATH: _retention_file(evictions, self._bytes_freed),
            REJECTIONS_PATH: _list_file(omitted_note(self._rejections_total), "rejections", rejections),
        }
        for sub in subs.values():
            if sub.feedback is not None:
                files.update(sub.files())
        if self._latest is not None:
            files[LATEST_PATH] = files[f"{self._latest}/feedback.json"]
        return MirrorState(
            files=Map(files),
            submissions=Map(subs),
            latest=self._latest,
            digest_owners=Map({digest: frozenset(owners) for digest, owners in self._owners.items()}),
            evictions=evictions,
            bytes_freed=self._bytes_freed,
            rejections=rejections,
            rejections_total=self._rejections_total,
            events=self._events,
        )

    # -- one method per kind (the rules of the handlers of apply) ---------------------------------------
    def _submission_accepted(self, e: SubmissionAccepted) -> None:
        if e.submission_id not in self._subs:  # the first acceptance wins
            self._subs[e.submission_id] = _Draft(e.submission_id, e.program_digest, tuple(e.episodes))

    def _episode_finished(self, e: EpisodeFinished) -> None:
        sub = self._subs.get(e.submission_id) if e.submission_id is not None else None
        if sub is not None:
            sub.results[e.index] = mirror_episode(e)

    def _infra_fault(self, e: InfraFault) -> None:
        sub = self._subs.get(e.submission_id) if e.submission_id is not None else None
        if sub is not None:
            sub.infra_faults = sub.infra_faults | frozenset(e.indices)

    def _feedback_published(self, e: FeedbackPublished) -> None:
        sub = self._subs.get(e.submission_id)
        if sub is None or sub.feedback is not None:
            return  # unknown Submission, or a repeated publication (the first one wins)
        artifacts = tuple(MirrorArtifact(**a.model_dump(mode="json")) for a in e.artifacts)
        sub.feedback = MirrorFeedback(e.score, e.content_digest, e.budget_used, e.budget_left, artifacts)
        for artifact in artifacts:
            self._owners.setdefault(artifact.digest, set()).add(e.submission_id)
        self._latest = e.submission_id

    def _bulk_evicted(self, e: BulkEvicted) -> None:
        evicted = frozenset(e.digests)
        for sid in sorted({sid for d in e.digests for sid in self._owners.get(d, ())}):
            sub = self._subs[sid]
            if sub.feedback is None:
                continue
            artifacts = tuple(
                replace(a, evicted=True) if a.digest in evicted and not a.evicted else a for a in sub.feedback.artifacts
            )
            if artifacts != sub.feedback.artifacts:
                sub.feedback = replace(sub.feedback, artifacts=artifacts)
        record = e.model_dump(mode="json", include={"digests", "submission_ids", "bytes_freed", "reason"})
        self._evictions.append(canonical_json(record))
        self._bytes_freed += e.bytes_freed

    def _rejected(self, record: bytes) -> None:
        self._rejections = append_listed(self._rejections, record)
        self._rejections_total += 1

    def _submission_rejected(self, e: SubmissionRejected) -> None:
        self._rejected(rejection_record(e.kind, e.code, e.message, e.retryable, e.request))

    def _finish_rejected(self, e: FinishRejected) -> None:
        self._rejected(rejection_record(e.kind, e.code, e.message, e.retryable, e.request or None))


_HANDLERS: Final[dict[str, Callable[[MirrorBuilder, Any], None]]] = {
    "submission-accepted": MirrorBuilder._submission_accepted,
    "episode-finished": MirrorBuilder._episode_finished,
    "infra-fault": MirrorBuilder._infra_fault,
    "feedback-published": MirrorBuilder._feedback_published,
    "bulk-evicted": MirrorBuilder._bulk_evicted,
    "submission-rejected": MirrorBuilder._submission_rejected,
    "finish-rejected": MirrorBuilder._finish_rejected,
}


def fold_from_zero(events: Iterable[EventBase | tuple[Visibility, EventBase]]) -> MirrorState:
    """:func:`~evoledger.projections.mirror.fold` from zero: Events, or ``(visibility, event)`` pairs."""
    builder = MirrorBuilder()
    for item in events:
        if isinstance(item, tuple):
            builder.add(item[1], item[0])
        else:
            builder.add(item)
    return builder.build()
