"""The hash-chained Event log: the :class:`EventLog` protocol and its SQLite backend.

Rows carry a 0-based ``seq`` (the first event is ``seq`` 0, so a log's ``count`` is also the
next ``seq``), ``kind``, ``version``, ``visibility``, the canonical-JSON ``payload``,
``prev_hash``, ``hash`` (:func:`~evoledger.ledger.records.chain_hash`) and ``recorded_at``
(ISO-8601 UTC from an injected clock; one timestamp per appended batch; never hashed).

``append(events, *, expected_head=...)`` is optimistic concurrency: ``expected_head`` is a
*required* keyword holding the head hash the caller last saw (``GENESIS_HASH`` for an empty
log). There is deliberately no "don't care" value -- ``None`` is refused -- so an append can
never silently fork a history it has not read. A batch is atomic: either every event is
appended or (on any invalid event or stale head) none is.

Backends: :class:`SQLiteEventLog` here, ``MemoryEventLog`` in ``ledger.memory``. Both pass the
same contract tests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Final, NoReturn, Protocol

import orjson
from evoledger.ledger.canonical import (
    MAX_PAYLOAD_BYTES,
    SCAN_JSON,
    canonical_json,
    is_canonical,
    is_digest,
    parse_canonical,
)
from evoledger.ledger.database import SQLITE_ERRORS, Database, database_failure
from evoledger.ledger.errors import ConcurrencyError, EncodingError, InputError, IntegrityError
from evoledger.ledger.head import EMPTY_HEAD, Head, HeadManifest
from evoledger.ledger.records import EncodedEvent, PendingEvent, StoredEvent

__all__ = [
    "Clock",
    "EventLog",
    "Head",
    "SQLiteEventLog",
    "build_chain",
    "check_batch",
    "check_expected_head",
    "check_pending",
    "check_read_args",
    "row_to_event",
    "timestamp",
    "utc_now",
]

Clock = Callable[[], datetime]
_VISIBILITIES: Final = frozenset({"public", "host"})
# The C scanner behind json.loads, without its whitespace skipping and bytes sniffing.
_fast_loads: Final = orjson.loads


_READ_CHUNK: Final = 2048
_new_row: Final = tuple.__new__
_COLUMNS: Final = "seq, kind, version, visibility, payload, prev_hash, hash, recorded_at"


class EventLog(Protocol):
    """An append-only, hash-chained sequence of :class:`StoredEvent`."""

    def append(self, events: Sequence[PendingEvent], *, expected_head: str) -> list[StoredEvent]:
        """Append ``events`` atomically if the current head hash is ``expected_head``.

        Raises :class:`ConcurrencyError` on a stale head, :class:`EncodingError` for a payload that
        is not canonical JSON and :class:`InputError` for any other invalid event.
        """
        ...

    def read(
        self, from_seq: int = 0, *, visibility: str | None = None, kinds: Collection[str] | None = None
    ) -> Iterator[StoredEvent]:
        """Stream events with ``seq >= from_seq`` in ``seq`` order, optionally filtered."""
        ...

    def head(self) -> Head:
        """The current head hash and event count."""
        ...


def utc_now() -> datetime:
    """The default clock: the real time in UTC."""
    return datetime.now(UTC)


def timestamp(clock: Clock) -> str:
    """``clock()`` as ISO-8601 UTC with microseconds, e.g. ``2024-05-01T12:00:00.000000Z``."""
    moment = clock()
    if not isinstance(moment, datetime) or moment.tzinfo is None or moment.utcoffset() is None:
        raise InputError(
            f"the ledger clock returned {moment!r}; it must return a timezone-aware datetime (e.g. datetime.now(UTC))"
        )
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def check_expected_head(expected_head: object) -> str:
    """Validate the ``expected_head`` argument of an append."""
    if not isinstance(expected_head, str) or not is_digest(expected_head):
        raise InputError(
            f"expected_head must be the head hash you last read (log.head().hash; GENESIS_HASH for an "
            f"empty log), got {expected_head!r:.100}; there is no 'don't care' value"
        )
    return expected_head


def check_pending(event: object) -> PendingEvent:
    """Validate one event about to be appended; returns it unchanged."""
    return check_batch([event])[0]


def check_batch(events: Iterable[object]) -> list[PendingEvent]:
    """Validate a batch about to be appended (all or nothing); returns it as a list.

    Each payload must be exactly ``canonical_json`` of the one JSON value it holds. An
    :class:`~evoledger.ledger.records.EncodedEvent` (what ``PendingEvent.encode`` returns) holds such
    a payload by construction and is not parsed again. Any other payload is checked in full, batched:
    every payload is parsed on its own (it must be one complete value), then the list of values is
    encoded once and compared with ``[p1,p2,...]``. Because each ``p_i`` is one complete JSON value,
    equal concatenations force ``canonical_json(v_i) == p_i`` for every item; on any
    mismatch the items are re-checked one by one to name the culprit.
    """
    batch: list[PendingEvent] = []
    unchecked: list[bytes] = []
    values: list[Any] = []
    scan = SCAN_JSON
    known = _KNOWN_HEADERS
    for event in events:
        if type(event) is not PendingEvent and not isinstance(event, PendingEvent):
            raise InputError(f"append() takes PendingEvent values, got {type(event).__name__}")
        kind, version, visibility, payload = event.kind, event.version, event.visibility, event.payload
        if (  # exact types first: True == 1, and a list kind is unhashable
            type(kind) is not str
            or type(version) is not int
            or type(visibility) is not str
            or (kind, version, visibility) not in known
        ):
            _check_header(kind, version, visibility)
        if type(event) is EncodedEvent:  # canonical by construction
            batch.append(event)
            continue
        if not isinstance(payload, bytes):
            raise EncodingError(f"event {kind!r} payload must be canonical JSON bytes, got {type(payload).__name__}")
        if len(payload) > MAX_PAYLOAD_BYTES:  # what no reader accepts is not written
            raise EncodingError(f"event {kind!r} payload of {len(payload):,} bytes exceeds {MAX_PAYLOAD_BYTES:,}")
        try:
            value = _fast_loads(payload)  # whole input, strict UTF-8, no NaN/Infinity literals
        except ValueError:  # orjson.JSONDecodeError; also integers beyond 64 bits, which JSON allows
            try:
                text = payload.decode("utf-8")
                value, end = scan(text, 0)
            except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
                _raise_not_canonical(event)
            if end != len(text):
                _raise_not_canonical(event)
        batch.append(event)
        unchecked.append(payload)
        values.append(value)
    if unchecked:
        try:
            same = canonical_json(values) == b"[" + b",".join(unchecked) + b"]"
        except EncodingError:
            same = False
        if not same:
            for event in batch:
                if type(event) is not EncodedEvent and not is_canonical(event.payload):
                    _raise_not_canonical(event)
    return batch


_KNOWN_HEADERS: Final[set[tuple[str, int, str]]] = set()
"""``(kind, version, visibility)`` triples already found valid (bounded: see ``_check_header``)."""
_KNOWN_HEADERS_LIMIT: Final = 4096


def _check_header(kind: object, version: object, visibility: object) -> None:
    if not isinstance(kind, str) or not kind or "\x00" in kind or len(kind) > 200:
        raise InputError(f"event kind must be a non-empty string without NUL (<= 200 chars), got {kind!r:.100}")
    if type(version) is not int or version < 0:
        raise InputError(f"event {kind!r} has version {version!r}; it must be a non-negative int")
    if not isinstance(visibility, str) or visibility not in _VISIBILITIES:
        raise InputError(f"event {kind!r} has visibility {visibility!r}; it must be 'public' or 'host'")
    if type(kind) is str and type(visibility) is str and len(_KNOWN_HEADERS) < _KNOWN_HEADERS_LIMIT:
        _KNOWN_HEADERS.add((kind, version, visibility))


def _raise_not_canonical(event: PendingEvent) -> NoReturn:
    parse_canonical(event.payload)  # raises EncodingError naming the problem when it is not even JSON
    raise EncodingError(
        f"event {event.kind!r} payload is valid JSON but not canonical: {event.payload[:120]!r}; "
        "encode it with evoledger.ledger.canonical_json (sorted keys, no spaces, UTF-8)"
    )


def check_read_args(from_seq: object, visibility: object, kinds: object) -> tuple[str, ...] | None:
    """Validate the arguments of ``read``; returns ``kinds`` as a tuple (or ``None``)."""
    if type(from_seq) is not int or from_seq < 0:
        raise InputError(f"from_seq must be a non-negative int (seq is 0-based), got {from_seq!r}")
    if visibility is not None and (not isinstance(visibility, str) or visibility not in _VISIBILITIES):
        raise InputError(f"visibility must be 'public', 'host' or None, got {visibility!r}")
    if kinds is None:
        return None
    if isinstance(kinds, str) or not isinstance(kinds, Collection):
        raise InputError(f"kinds must be a collection of kind names (e.g. a set), got {kinds!r:.100}")
    for kind in kinds:
        if not isinstance(kind, str):
            raise InputError(f"kinds must hold strings, got {kind!r:.100}")
    return tuple(sorted(kinds))


def build_chain(events: Sequence[PendingEvent], head: Head, recorded_at: str) -> list[StoredEvent]:
    """The rows that appending ``events`` after ``head`` produces.

    Computes exactly :func:`~evoledger.ledger.records.chain_hash` (the contract tests compare every
    row with ``StoredEvent.expected_hash``), with the ``kind/version/visibility`` part encoded once
    per distinct triple: this is the hot path of batched appends.
    """
    sha256 = hashlib.sha256
    new_row = tuple.__new__  # StoredEvent's own __new__ without its extra Python frame
    middles: dict[tuple[str, int, str], bytes] = {}
    stored: list[StoredEvent] = []
    append = stored.append
    prev, seq = head.hash, head.count
    for event in events:
        kind, version, visibility, payload = event.kind, event.version, event.visibility, event.payload
        triple = (kind, version, visibility)
        middle = middles.get(triple)
        if middle is None:
            middle = b"\x00%s\x00%d\x00%s\x00" % (kind.encode("utf-8"), version, visibility.encode("ascii"))
            middles[triple] = middle
        hasher = sha256(prev.encode("ascii") + middle)
        hasher.update(payload)
        digest = "sha256:" + hasher.hexdigest()
        append(new_row(StoredEvent, (seq, kind, version, visibility, payload, prev, digest, recorded_at)))
        prev, seq = digest, seq + 1
    return stored


def row_to_event(row: Sequence[object]) -> StoredEvent:
    """Decode one ``events`` row, refusing values of the wrong type (a damaged file)."""
    seq, kind, version, visibility, payload, prev_hash, digest, recorded_at = row
    if (
        type(seq) is not int
        or type(kind) is not str
        or type(version) is not int
        or visibility not in _VISIBILITIES
        or type(payload) is not bytes
        or type(prev_hash) is not str
        or type(digest) is not str
        or type(recorded_at) is not str
    ):
        raise IntegrityError(
            f"event row {seq!r} of the log is damaged (unexpected column types); run `evoledger ledger verify`"
        )
    return _new_row(StoredEvent, row)


class SQLiteEventLog:
    """The Event log in the ``events`` table of ``ledger.sqlite``.

    A writable log caches its head (the single-writer lock guarantees nobody else appends) and,
    when given a :class:`HeadManifest`, rewrites it after every committed append (once per
    outermost transaction).
    """

    def __init__(self, db: Database, *, clock: Clock | None = None, manifest: HeadManifest | None = None) -> None:
        self._db: Final = db
        self._clock: Final = clock if clock is not None else utc_now
        self._manifest: Final = manifest
        self._head: Head | None = None
        self.on_manifest: Callable[[Head], None] | None = None
        """Called with the head after each manifest rewrite (the Host signs it: ``Ledger.sign_heads``)."""

    def head(self) -> Head:
        db = self._db
        with db.lock:
            if self._head is not None:
                return self._head
            try:
                row = db.conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, db.path, "reading the log head") from exc
            if row is None:
                head = EMPTY_HEAD
            elif type(row[0]) is not int or not is_digest(row[1]):
                raise IntegrityError(f"the last event row of {db.path} is damaged; run `evoledger ledger verify`")
            else:
                head = Head(row[1], row[0] + 1)
            if db.writable:
                self._head = head
            return head

    def append(self, events: Sequence[PendingEvent], *, expected_head: str) -> list[StoredEvent]:
        check_expected_head(expected_head)
        batch = check_batch(events)
        db = self._db
        db.require_writable("append events")
        recorded_at = timestamp(self._clock)
        with db.lock, db.transaction():
            head = self.head()
            if head.hash != expected_head:
                raise ConcurrencyError(
                    f"stale expected head {expected_head}: the log's head is {head.hash} after "
                    f"{head.count} events; someone appended first. Re-read the log and retry"
                )
            if not batch:
                return []
            stored = build_chain(batch, head, recorded_at)
            db.on_rollback(self._forget_head)
            try:
                db.conn.executemany(
                    f"INSERT INTO events({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    stored,  # rows are tuples
                )
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, db.path, "appending events") from exc
            self._head = Head(stored[-1].hash, stored[-1].seq + 1)
            if self._manifest is not None:
                db.after_commit("head-manifest", self._write_manifest)
        return stored

    def read(
        self, from_seq: int = 0, *, visibility: str | None = None, kinds: Collection[str] | None = None
    ) -> Iterator[StoredEvent]:
        kind_list = check_read_args(from_seq, visibility, kinds)
        where = "seq >= ?"
        params: list[object] = []
        if visibility is not None:
            where += " AND visibility = ?"
            params.append(visibility)
        if kind_list is not None:
            where += f" AND kind IN ({', '.join('?' * len(kind_list))})"
            params.extend(kind_list)
        sql = f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY seq LIMIT {_READ_CHUNK}"
        return self._stream(sql, from_seq, params)

    def _stream(self, sql: str, from_seq: int, params: list[object]) -> Iterator[StoredEvent]:
        db = self._db
        next_seq = from_seq
        while True:
            with db.lock:
                try:
                    rows = db.conn.execute(sql, (next_seq, *params)).fetchall()
                except SQLITE_ERRORS as exc:
                    raise database_failure(exc, db.path, "reading events") from exc
            if not rows:  # fetch until empty: events appended while we iterate are seen, as in memory
                return
            for row in rows:
                yield row_to_event(row)
            next_seq = rows[-1][0] + 1

    def _forget_head(self) -> None:
        self._head = None

    def _write_manifest(self) -> None:
        if self._manifest is not None:
            head = self.head()
            self._manifest.write(head)
            if self.on_manifest is not None:
                self.on_manifest(head)
