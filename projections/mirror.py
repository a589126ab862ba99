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

``rejections.json`` lists the last :data:`MAX_LISTED_REJECTIONS` refusals, each with its message cut to
:data:`MAX_MESSAGE_CHARS` characters and its request summary as recorded (the Host records a digest and a
short prefix, :func:`~evoledger.ledger.events.request_summary`). A request recorded in full by an older
Host is summarized the same way here when its canonical JSON exceeds :data:`MAX_REQUEST_BYTES`, so that
even an old log yields a small file.

Each rule is written once, as one handler per Event kind over :class:`MirrorBuilder`, a private mutable
draft on top of a frozen state that :func:`apply` (one Event) and :func:`fold` (many) both drive. Only
the Submissions an Event touches are thawed; :meth:`MirrorBuilder.build` re-renders exactly their files
(a Submission's paths are prefixed by its id, so Submissions never share one), ``latest.json`` when the
latest published Submission changed, and ``retention.json`` / ``rejections.json`` when their histories
grew.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple

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
    request_summary,
)
from evoledger.ledger.events.base import EpisodeStatus
from evoledger.ledger.events.feedback import Retention
from evoledger.ledger.records import Visibility
from evoledger.projections.handlers import Handlers
from immutables import Map, MapMutation

__all__ = [
    "LATEST_PATH",
    "MAX_LISTED_REJECTIONS",
    "MAX_MESSAGE_CHARS",
    "MAX_REQUEST_BYTES",
    "REJECTIONS_PATH",
    "RETENTION_PATH",
    "RETENTION_RULE",
    "FileSource",
    "InlineFile",
    "JsonFile",
    "MirrorArtifact",
    "MirrorBuilder",
    "MirrorEpisode",
    "MirrorFeedback",
    "MirrorState",
    "MirrorSubmission",
    "ObjectFile",
    "append_listed",
    "apply",
    "fold",
    "mirror_episode",
    "omitted_note",
    "rejection_record",
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
MAX_LISTED_REJECTIONS: Final = 100
"""``rejections.json`` lists at most this many refusals: the latest ones (older ones are counted)."""
MAX_MESSAGE_CHARS: Final = 1024
"""A listed message is cut to this many characters (the Host's own messages are already this short)."""
MAX_REQUEST_BYTES: Final = 1024
"""A recorded request whose canonical JSON is larger is listed as its summary (digest, size, prefix)."""


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


class MirrorEpisode(NamedTuple):
    """How one training Episode of a Submission ended (the latest attempt); its pool index is its key.

    A named tuple rather than a frozen dataclass: one is made per Episode in every fold (see
    ``run_state.EpisodeView``)."""

    status: EpisodeStatus
    episode_return: float
    steps: int
    failure_code: str | None = None
    failure_message: str | None = None
    traceback_digest: str | None = None
    policy_log_digest: str | None = None

    def as_json(self, index: int) -> dict[str, Any]:
        """The entry in ``feedback.json`` of this result of Episode ``index``."""
        failure = None if self.failure_code is None else {"code": self.failure_code, "message": self.failure_message}
        return {
            "index": index,
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
    retention: Retention
    evicted: bool = False

    def as_json(self) -> dict[str, Any]:
        """The Artifact's entry in ``feedback.json``."""
        return {
            "name": self.name,
            "media_type": self.media_type,
            "digest": self.digest,
            "size": self.size,
            "retention": self.retention,
            "evicted": self.evicted,
        }


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
            "episodes": [self.results[i].as_json(i) for i in self.episodes if i in self.results],
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


# -- rejections.json ------------------------------------------------------------------------------------


def rejection_record(kind: str, code: str, message: str, retryable: bool, request: Mapping[str, Any] | None) -> bytes:
    """The canonical JSON of one listed refusal (``request`` is ``None`` for kinds that record none)."""
    if len(message) > MAX_MESSAGE_CHARS:
        keep = MAX_MESSAGE_CHARS - 48
        message = f"{message[:keep]} ... ({len(message) - keep} more characters)"
    record: dict[str, Any] = {"kind": kind, "code": code, "message": message, "retryable": retryable}
    if request is not None:
        small = len(canonical_json(dict(request))) <= MAX_REQUEST_BYTES
        record["request"] = request if small else request_summary(request)
    return canonical_json(record)


def append_listed(listed: Map[int, bytes], record: bytes) -> Map[int, bytes]:
    """``listed`` (items 0..n-1) with ``record`` appended, keeping the latest :data:`MAX_LISTED_REJECTIONS`.

    O(log n) while the list grows, O(:data:`MAX_LISTED_REJECTIONS`) once it is full: bounded either way.
    """
    if len(listed) < MAX_LISTED_REJECTIONS:
        return listed.set(len(listed), record)
    kept = [listed[i] for i in range(1, len(listed))]
    kept.append(record)
    return Map(dict(enumerate(kept)))


def omitted_note(total: int) -> dict[str, Any]:
    """The top-level fields of ``rejections.json`` once ``total`` refusals exceed what it lists."""
    omitted = total - MAX_LISTED_REJECTIONS
    if omitted <= 0:
        return {}
    return {"omitted": omitted, "note": f"only the latest {MAX_LISTED_REJECTIONS} refused requests are listed"}


# -- the fold -------------------------------------------------------------------------------------------


def apply(state: MirrorState, event: EventBase, visibility: Visibility | None = None) -> MirrorState:
    """The mirror after ``event``.

    ``visibility`` is the stored row's visibility (default: the Event class's). If either says
    ``host`` the state is returned unchanged: a host Event never influences the mirror.
    """
    builder = MirrorBuilder(state)
    builder.add(event, visibility)
    return builder.build()


def fold(events: Iterable[EventBase | tuple[Visibility, EventBase]], state: MirrorState | None = None) -> MirrorState:
    """Fold ``events`` (Events, or ``(visibility, event)`` pairs from stored rows) from ``state`` or zero.

    Equal to applying :func:`apply` Event by Event. From a Ledger:
    ``fold((r.stored.visibility, r.event) for r in ledger.events())``.
    """
    builder = MirrorBuilder(state)
    add = builder.add
    for item in events:
        if isinstance(item, tuple):
            add(item[1], item[0])
        else:
            add(item)
    return builder.build()


def mirror_episode(e: EpisodeFinished) -> MirrorEpisode:
    """The :class:`MirrorEpisode` an ``episode-finished`` Event shows the Agent."""
    failure = e.failure
    if failure is None:
        return MirrorEpisode(e.status, e.episode_return, e.steps, None, None, None, e.policy_log_digest)
    return MirrorEpisode(
        e.status,
        e.episode_return,
        e.steps,
        failure.code,
        failure.message,
        failure.traceback_digest,
        e.policy_log_digest,
    )


class _SubmissionDraft:
    """A :class:`MirrorSubmission` being folded: mutable fields, results as a persistent-map mutation."""

    __slots__ = ("episodes", "feedback", "infra_faults", "program_digest", "results")

    def __init__(self, sub: MirrorSubmission) -> None:
        self.program_digest, self.episodes = sub.program_digest, sub.episodes
        self.results: MapMutation[int, MirrorEpisode] = sub.results.mutate()
        self.infra_faults = sub.infra_faults
        self.feedback = sub.feedback

    def freeze(self, submission_id: str) -> MirrorSubmission:
        return MirrorSubmission(
            submission_id, self.program_digest, self.episodes, self.results.finish(), self.infra_faults, self.feedback
        )


class MirrorBuilder:
    """The mutable draft of a :class:`MirrorState` that the handlers drive; :meth:`build` freezes it.

    ``MirrorBuilder(state)`` continues from ``state`` (default: the empty mirror), which is only read.
    :meth:`add` takes an Event and optionally its stored visibility, exactly like :func:`apply`.
    A builder belongs to one fold.
    """

    __slots__ = (
        "_evictions_grew",
        "_rejections_grew",
        "_subs",
        "bytes_freed",
        "events",
        "evictions",
        "head",
        "latest",
        "owners",
        "rejections",
        "rejections_total",
    )

    def __init__(self, state: MirrorState | None = None) -> None:
        self._start(state if state is not None else MirrorState())

    def _start(self, state: MirrorState) -> None:
        self.head = state
        self._subs: dict[str, _SubmissionDraft] = {}
        self.latest = state.latest
        self.owners: MapMutation[str, frozenset[str]] = state.digest_owners.mutate()
        self.evictions: MapMutation[int, bytes] = state.evictions.mutate()
        self.bytes_freed = state.bytes_freed
        self.rejections = state.rejections
        self.rejections_total = state.rejections_total
        self.events = state.events
        self._evictions_grew = self._rejections_grew = False

    def add(self, event: EventBase, visibility: Visibility | None = None) -> None:
        """Fold one Event (see :func:`apply` for ``visibility``)."""
        kind = type(event)
        if visibility != "public" and visibility is not None:
            if visibility != "host":
                raise InputError(
                    f"visibility must be 'public' or 'host', got {visibility!r}; pass the stored row's value"
                )
            return
        if kind.visibility != "public":
            return
        handler = _handler_of(kind)
        if handler is not None:
            handler(event, self)
        self.events += 1

    def submission(self, submission_id: str | None) -> _SubmissionDraft | None:
        """The draft of accepted Submission ``submission_id`` (``None``: unknown, or an Evaluation's)."""
        if submission_id is None:
            return None
        draft = self._subs.get(submission_id)
        if draft is None:
            sub = self.head.submissions.get(submission_id)
            if sub is None:
                return None
            draft = self._subs[submission_id] = _SubmissionDraft(sub)
        return draft

    def build(self) -> MirrorState:
        """The folded mirror: re-renders the files of what changed (the builder may go on folding afterwards)."""
        head = self.head
        evictions = self.evictions.finish()
        with head.files.mutate() as files, head.submissions.mutate() as subs:
            for sid, draft in self._subs.items():
                new, old = draft.freeze(sid), head.submissions.get(sid)
                subs[sid] = new
                old_files = old.files() if old is not None else {}
                new_files = new.files()
                for path in old_files.keys() - new_files.keys():
                    del files[path]
                for path, source in new_files.items():
                    if old_files.get(path) != source:
                        files[path] = source
            latest = self.latest
            if latest is not None and (latest != head.latest or latest in self._subs):
                files[LATEST_PATH] = files[f"{latest}/feedback.json"]
            if self._evictions_grew:
                files[RETENTION_PATH] = _retention_file(evictions, self.bytes_freed)
            if self._rejections_grew:
                note = omitted_note(self.rejections_total)
                files[REJECTIONS_PATH] = _list_file(note, "rejections", self.rejections)
            state = MirrorState(
                files=files.finish(),
                submissions=subs.finish(),
                latest=latest,
                digest_owners=self.owners.finish(),
                evictions=evictions,
                bytes_freed=self.bytes_freed,
                rejections=self.rejections,
                rejections_total=self.rejections_total,
                events=self.events,
            )
        self._start(state)
        return state

    def rejected(self, record: bytes) -> None:
        """List one more refusal in ``rejections.json``."""
        self.rejections = append_listed(self.rejections, record)
        self.rejections_total += 1
        self._rejections_grew = True


# -- one handler per Event kind ---------------------------------------------------------------------------

_HANDLERS: Final[Handlers[MirrorBuilder]] = Handlers()
_handler_of: Final = _HANDLERS.of


@_HANDLERS.on(SubmissionAccepted)
def _submission_accepted(e: SubmissionAccepted, b: MirrorBuilder) -> None:
    if b.submission(e.submission_id) is not None:
        return  # the first acceptance wins; a Host never repeats one
    sub = MirrorSubmission(submission_id=e.submission_id, program_digest=e.program_digest, episodes=tuple(e.episodes))
    b._subs[e.submission_id] = _SubmissionDraft(sub)


@_HANDLERS.on(EpisodeFinished)
def _episode_finished(e: EpisodeFinished, b: MirrorBuilder) -> None:
    sid = e.submission_id
    sub = (b._subs.get(sid) if sid is not None else None) or b.submission(sid)  # (the first: the common case)
    if sub is not None:  # else a standalone Evaluation's Episode, or an unknown Submission
        sub.results[e.index] = mirror_episode(e)


@_HANDLERS.on(InfraFault)
def _infra_fault(e: InfraFault, b: MirrorBuilder) -> None:
    sub = b.submission(e.submission_id)
    if sub is not None:
        sub.infra_faults = sub.infra_faults | frozenset(e.indices)


@_HANDLERS.on(FeedbackPublished)
def _feedback_published(e: FeedbackPublished, b: MirrorBuilder) -> None:
    sub = b.submission(e.submission_id)
    if sub is None or sub.feedback is not None:
        return  # unknown Submission, or a repeated publication (the first one wins)
    artifacts = tuple(MirrorArtifact(a.name, a.media_type, a.digest, a.size, a.retention) for a in e.artifacts)
    sub.feedback = MirrorFeedback(e.score, e.content_digest, e.budget_used, e.budget_left, artifacts)
    owners = b.owners
    for artifact in artifacts:
        owners[artifact.digest] = owners.get(artifact.digest, frozenset()) | {e.submission_id}
    b.latest = e.submission_id


@_HANDLERS.on(BulkEvicted)
def _bulk_evicted(e: BulkEvicted, b: MirrorBuilder) -> None:
    evicted = frozenset(e.digests)
    for sid in sorted({sid for d in e.digests for sid in b.owners.get(d, frozenset())}):
        sub = b.submission(sid)
        if sub is None or sub.feedback is None:
            continue
        artifacts = tuple(
            replace(a, evicted=True) if a.digest in evicted and not a.evicted else a for a in sub.feedback.artifacts
        )
        if artifacts != sub.feedback.artifacts:
            sub.feedback = replace(sub.feedback, artifacts=artifacts)
    record = e.model_dump(mode="json", include={"digests", "submission_ids", "bytes_freed", "reason"})
    b.evictions[len(b.evictions)] = canonical_json(record)
    b.bytes_freed += e.bytes_freed
    b._evictions_grew = True


@_HANDLERS.on(SubmissionRejected)
def _submission_rejected(e: SubmissionRejected, b: MirrorBuilder) -> None:
    b.rejected(rejection_record(e.kind, e.code, e.message, e.retryable, e.request))


@_HANDLERS.on(FinishRejected)
def _finish_rejected(e: FinishRejected, b: MirrorBuilder) -> None:
    b.rejected(rejection_record(e.kind, e.code, e.message, e.retryable, e.request or None))
