"""The Agent-mirror projection: the desired file tree of ``workspace/feedback/``, folded from public Events.

Paths are relative to the mirror directory (``workspace/feedback/``)::

    latest.json                                   the latest published Submission's feedback document
    retention.json                                bulk evictions so far, and the retention rule
    rejections.json                               the latest refused submit / finish requests, bounded
    <submission_id>/feedback.json                 score, content, Episodes, infra faults, budget, Artifacts
    <submission_id>/artifacts/<name>              an Artifact's bytes (removed once evicted)
    <submission_id>/tracebacks/episode-<i>.txt    the Policy traceback of a failed Episode
    <submission_id>/policy-logs/episode-<i>.txt   the Policy's captured output of a failed Episode

**Only public Events reach a file.** :func:`apply` takes the row's visibility (or uses the Event
class's) and returns the state unchanged for anything ``host``: Validation, Assessment, Host seeds
and Run configuration never influence the mirror. Episodes of standalone Evaluations are ignored.

The fold is pure and does no I/O: :attr:`MirrorState.files` maps each path to a :data:`FileSource`
(inline bytes, an Object reference, or a JSON document completed at write time) and
``projections.mirror_files`` renders and writes it. A Submission's folder appears when its Feedback
is published (first publication wins). An eviction (``bulk-evicted``) applies to every Artifact
published before it with an evicted digest, in any Submission -- the bytes are shared -- while an
Artifact published later with the same digest is retained (publishing restores the bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
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
from evoledger.projections.mirror_rejections import append_listed, omitted_note, rejection_record
from immutables import Map

__all__ = [
    "LATEST_PATH",
    "REJECTIONS_PATH",
    "RETENTION_PATH",
    "RETENTION_RULE",
    "FileSource",
    "InlineFile",
    "JsonFile",
    "MirrorArtifact",
    "MirrorEpisode",
    "MirrorFeedback",
    "MirrorState",
    "MirrorSubmission",
    "ObjectFile",
    "apply",
    "fold",
]

LATEST_PATH: Final = "latest.json"
RETENTION_PATH: Final = "retention.json"
REJECTIONS_PATH: Final = "rejections.json"
RETENTION_RULE: Final = (
    "Bulk Artifacts count twice against the Run's bulk_feedback_retention_bytes: once in the Host's record "
    "and once as the file in this folder. When the cap is exceeded the Host evicts the bulk Artifacts of the "
    "oldest Submissions first. It never evicts the newest Submission's Artifacts, permanent Artifacts, "
    "feedback.json files, or your analysis/ folder. An evicted Artifact disappears from "
    '<submission>/artifacts/ and is marked "evicted": true in that Submission\'s feedback.json.'
)


@dataclass(frozen=True, slots=True)
class InlineFile:
    """A file whose bytes are known in the fold."""

    data: bytes


@dataclass(frozen=True, slots=True)
class ObjectFile:
    """A file holding an Object's bytes, fetched at write time."""

    digest: str


@dataclass(frozen=True, slots=True)
class JsonFile:
    """A pretty JSON object completed at write time.

    ``document`` is the canonical JSON of an object; each ``(key, digest)`` of ``embeds`` sets
    ``key`` to the parsed JSON content of that Object, and each ``(key, items)`` of ``lists`` sets
    ``key`` to the list of ``items[0], items[1], ...`` (canonical JSON values). Lists are persistent
    maps so that appending an item to a long history costs O(log n), not a re-render.
    """

    document: bytes
    embeds: tuple[tuple[str, str], ...] = ()
    lists: tuple[tuple[str, Map[int, bytes]], ...] = ()


FileSource = InlineFile | ObjectFile | JsonFile
"""Where the bytes of one mirror file come from."""


@dataclass(frozen=True, slots=True)
class MirrorEpisode:
    """How one training Episode of a Submission ended (the latest attempt)."""

    index: int
    status: str
    episode_return: float
    steps: int
    failure_code: str | None = None
    failure_message: str | None = None
    traceback_digest: str | None = None
    policy_log_digest: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The Episode's entry in ``feedback.json``."""
        failure = None if self.failure_code is None else {"code": self.failure_code, "message": self.failure_message}
        return {
            "index": self.index,
            "status": self.status,
            "return": self.episode_return,
            "steps": self.steps,
            "failure": failure,
        }


@dataclass(frozen=True, slots=True)
class MirrorArtifact:
    """One Artifact of a published Feedback, and whether its bytes were evicted."""

    name: str
    media_type: str
    digest: str
    size: int
    retention: str
    evicted: bool = False

    def as_json(self) -> dict[str, Any]:
        """The Artifact's entry in ``feedback.json``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class MirrorFeedback:
    """The published part of a Submission's Feedback."""

    score: float | None
    content_digest: str
    budget_used: int
    budget_left: int
    artifacts: tuple[MirrorArtifact, ...] = ()


@dataclass(frozen=True, slots=True)
class MirrorSubmission:
    """One accepted Submission as the Agent may see it."""

    submission_id: str
    program_digest: str
    episodes: tuple[int, ...]
    results: Map[int, MirrorEpisode] = field(default_factory=Map)
    infra_faults: frozenset[int] = frozenset()
    feedback: MirrorFeedback | None = None

    def document(self) -> JsonFile | None:
        """The ``feedback.json`` source, or ``None`` while the Feedback is unpublished."""
        fb = self.feedback
        if fb is None:
            return None
        doc = {
            "submission_id": self.submission_id,
            "score": fb.score,
            "episodes": [self.results[i].as_json() for i in self.episodes if i in self.results],
            "infra_faults": sorted(self.infra_faults),
            "budget_used": fb.budget_used,
            "budget_left": fb.budget_left,
            "program_digest": self.program_digest,
            "artifacts": [a.as_json() for a in fb.artifacts],
        }
        return JsonFile(document=canonical_json(doc), embeds=(("content", fb.content_digest),))

    def files(self) -> dict[str, FileSource]:
        """Every mirror file of this Submission (none while its Feedback is unpublished)."""
        document = self.document()
        if document is None or self.feedback is None:
            return {}
        sid = self.submission_id
        out: dict[str, FileSource] = {f"{sid}/feedback.json": document}
        for artifact in _mirrorable(self.feedback.artifacts):
            out[f"{sid}/artifacts/{artifact.name}"] = ObjectFile(artifact.digest)
        for index in self.episodes:
            result = self.results.get(index)
            if result is None or result.status == "ok":
                continue
            if result.traceback_digest is not None:
                out[f"{sid}/tracebacks/episode-{index}.txt"] = ObjectFile(result.traceback_digest)
            if result.policy_log_digest is not None:
                out[f"{sid}/policy-logs/episode-{index}.txt"] = ObjectFile(result.policy_log_digest)
        return out


def _mirrorable(artifacts: tuple[MirrorArtifact, ...]) -> list[MirrorArtifact]:
    """The retained Artifacts whose names can coexist as files (``a`` and ``a/b`` cannot: first name wins)."""
    kept: set[str] = set()
    folders: set[str] = set()
    out: list[MirrorArtifact] = []
    for artifact in sorted(artifacts, key=lambda a: a.name):
        parts = artifact.name.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if artifact.name in folders or prefixes & kept:
            continue
        kept.add(artifact.name)
        folders |= prefixes
        if not artifact.evicted:
            out.append(artifact)
    return out


def _list_file(document: dict[str, Any], key: str, items: Map[int, bytes]) -> JsonFile:
    return JsonFile(document=canonical_json(document), lists=((key, items),))


def _retention_file(evictions: Map[int, bytes], bytes_freed: int) -> JsonFile:
    return _list_file({"rule": RETENTION_RULE, "bytes_freed": bytes_freed}, "evictions", evictions)


def _initial_files() -> Map[str, FileSource]:
    return Map({RETENTION_PATH: _retention_file(Map(), 0), REJECTIONS_PATH: _list_file({}, "rejections", Map())})


@dataclass(frozen=True, slots=True)
class MirrorState:
    """The desired mirror tree and the public facts it is rendered from."""

    files: Map[str, FileSource] = field(default_factory=_initial_files)
    submissions: Map[str, MirrorSubmission] = field(default_factory=Map)
    latest: str | None = None
    digest_owners: Map[str, frozenset[str]] = field(default_factory=Map)
    """Object digest -> Submissions with a published Artifact of that digest."""
    evictions: Map[int, bytes] = field(default_factory=Map)
    bytes_freed: int = 0
    rejections: Map[int, bytes] = field(default_factory=Map)
    """The listed refusals (the latest ``MAX_LISTED_REJECTIONS``), in order."""
    rejections_total: int = 0
    events: int = 0
    """Public Events applied so far (host Events are not counted)."""


# -- the fold -------------------------------------------------------------------------------------------


def _put_submission(state: MirrorState, new: MirrorSubmission) -> MirrorState:
    """Store ``new`` and bring its files (and ``latest.json``) in line with it."""
    old = state.submissions.get(new.submission_id)
    if new.feedback is None and (old is None or old.feedback is None):  # unpublished: no files yet
        return replace(state, submissions=state.submissions.set(new.submission_id, new))
    old_files = old.files() if old is not None else {}
    new_files = new.files()
    with state.files.mutate() as files:
        for path in old_files.keys() - new_files.keys():
            del files[path]
        for path, source in new_files.items():
            if old_files.get(path) != source:
                files[path] = source
        if state.latest == new.submission_id and new.feedback is not None:
            files[LATEST_PATH] = new_files[f"{new.submission_id}/feedback.json"]
        updated = files.finish()
    return replace(state, files=updated, submissions=state.submissions.set(new.submission_id, new))


def _submission_accepted(state: MirrorState, e: SubmissionAccepted) -> MirrorState:
    if e.submission_id in state.submissions:
        return state  # the first acceptance wins; a Host never repeats one
    sub = MirrorSubmission(submission_id=e.submission_id, program_digest=e.program_digest, episodes=tuple(e.episodes))
    return replace(state, submissions=state.submissions.set(e.submission_id, sub))


def _episode_finished(state: MirrorState, e: EpisodeFinished) -> MirrorState:
    sub = state.submissions.get(e.submission_id) if e.submission_id is not None else None
    if sub is None:
        return state  # a standalone Evaluation's Episode, or an unknown Submission
    failure = e.failure
    result = MirrorEpisode(
        index=e.index,
        status=e.status,
        episode_return=e.episode_return,
        steps=e.steps,
        failure_code=failure.code if failure is not None else None,
        failure_message=failure.message if failure is not None else None,
        traceback_digest=failure.traceback_digest if failure is not None else None,
        policy_log_digest=e.policy_log_digest,
    )
    return _put_submission(state, replace(sub, results=sub.results.set(e.index, result)))


def _infra_fault(state: MirrorState, e: InfraFault) -> MirrorState:
    sub = state.submissions.get(e.submission_id) if e.submission_id is not None else None
    if sub is None:
        return state
    return _put_submission(state, replace(sub, infra_faults=sub.infra_faults | frozenset(e.indices)))


def _feedback_published(state: MirrorState, e: FeedbackPublished) -> MirrorState:
    sub = state.submissions.get(e.submission_id)
    if sub is None or sub.feedback is not None:
        return state  # unknown Submission, or a repeated publication (the first one wins)
    artifacts = tuple(MirrorArtifact(**a.model_dump(mode="json")) for a in e.artifacts)
    feedback = MirrorFeedback(e.score, e.content_digest, e.budget_used, e.budget_left, artifacts)
    with state.digest_owners.mutate() as owners:
        for artifact in artifacts:
            owners[artifact.digest] = owners.get(artifact.digest, frozenset()) | {e.submission_id}
        digest_owners = owners.finish()
    state = replace(state, latest=e.submission_id, digest_owners=digest_owners)
    return _put_submission(state, replace(sub, feedback=feedback))


def _bulk_evicted(state: MirrorState, e: BulkEvicted) -> MirrorState:
    evicted = frozenset(e.digests)
    affected = sorted({sid for d in e.digests for sid in state.digest_owners.get(d, frozenset())})
    for sid in affected:
        sub = state.submissions[sid]
        if sub.feedback is None:
            continue
        artifacts = tuple(
            replace(a, evicted=True) if a.digest in evicted and not a.evicted else a for a in sub.feedback.artifacts
        )
        if artifacts != sub.feedback.artifacts:
            state = _put_submission(state, replace(sub, feedback=replace(sub.feedback, artifacts=artifacts)))
    record = e.model_dump(mode="json", include={"digests", "submission_ids", "bytes_freed", "reason"})
    evictions = state.evictions.set(len(state.evictions), canonical_json(record))
    bytes_freed = state.bytes_freed + e.bytes_freed
    files = state.files.set(RETENTION_PATH, _retention_file(evictions, bytes_freed))
    return replace(state, evictions=evictions, bytes_freed=bytes_freed, files=files)


def _rejected(state: MirrorState, record: bytes) -> MirrorState:
    rejections = append_listed(state.rejections, record)
    total = state.rejections_total + 1
    files = state.files.set(REJECTIONS_PATH, _list_file(omitted_note(total), "rejections", rejections))
    return replace(state, rejections=rejections, rejections_total=total, files=files)


def _submission_rejected(state: MirrorState, e: SubmissionRejected) -> MirrorState:
    return _rejected(state, rejection_record(e.kind, e.code, e.message, e.retryable, e.request))


def _finish_rejected(state: MirrorState, e: FinishRejected) -> MirrorState:
    return _rejected(state, rejection_record(e.kind, e.code, e.message, e.retryable, e.request or None))


_HANDLERS: Final[dict[str, Callable[[MirrorState, Any], MirrorState]]] = {
    "submission-accepted": _submission_accepted,
    "episode-finished": _episode_finished,
    "infra-fault": _infra_fault,
    "feedback-published": _feedback_published,
    "bulk-evicted": _bulk_evicted,
    "submission-rejected": _submission_rejected,
    "finish-rejected": _finish_rejected,
}


def apply(state: MirrorState, event: EventBase, visibility: Visibility | None = None) -> MirrorState:
    """The mirror after ``event``.

    ``visibility`` is the stored row's visibility (default: the Event class's). If either says
    ``host`` the state is returned unchanged: a host Event never influences the mirror.
    """
    if visibility is not None and visibility not in ("public", "host"):
        raise InputError(f"visibility must be 'public' or 'host', got {visibility!r}; pass the stored row's value")
    if visibility == "host" or type(event).visibility != "public":
        return state
    handler = _HANDLERS.get(event.kind)
    new = handler(state, event) if handler is not None else state
    return replace(new, events=state.events + 1)


def fold(events: Iterable[EventBase | tuple[Visibility, EventBase]], state: MirrorState | None = None) -> MirrorState:
    """Fold ``events`` (Events, or ``(visibility, event)`` pairs from stored rows) from ``state`` or zero.

    From zero this runs the batch fold of ``projections.mirror_builder`` (equal to applying
    :func:`apply` Event by Event); from a given ``state`` it applies them one by one.
    From a Ledger: ``fold((r.stored.visibility, r.event) for r in ledger.events())``.
    """
    if state is None:
        from evoledger.projections.mirror_builder import fold_from_zero  # it builds on this module

        return fold_from_zero(events)
    current = state
    for item in events:
        if isinstance(item, tuple):
            visibility, event = item
            current = apply(current, event, visibility)
        else:
            current = apply(current, item)
    return current
