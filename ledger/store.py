"""The :class:`Ledger` facade: one Run directory's Object store, Event log, manifest and lock.

On disk (``run_dir``)::

    ledger.sqlite   events + objects (WAL mode, synchronous=NORMAL)
    ledger.head     head manifest (hash + count), rewritten atomically after each commit
    ledger.lock     single-writer flock (held while a writable Ledger is open)
    objects/ab/     large Objects (>= 1 MiB raw) as zstd files

**Durability order.** Objects must be durable no later than the Events that reference them.
Either put them first (each ``objects.put``/``put_many`` outside a transaction commits at once,
and SQLite's WAL commits in order, so an Event that survives a crash implies its earlier Objects
survived), or do both in one transaction::

    with ledger.transaction():
        digest = ledger.objects.put(trajectory_bytes)
        ledger.append([EpisodeFinished(trajectory_digest=digest, ...)])

Large Object files are fsynced and renamed into place before their row is written. The head
manifest is written after the outermost commit. Evictions belong in a transaction together with
the ``bulk-evicted`` event that records them.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final, Literal

from evoledger.ledger.database import DATABASE_NAME, SQLITE_ERRORS, Database, database_failure
from evoledger.ledger.errors import (
    InputError,
    IntegrityError,
    LedgerExistsError,
    LedgerNotFoundError,
)
from evoledger.ledger.head import EMPTY_HEAD, MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.locking import LOCK_NAME, WriterLock
from evoledger.ledger.log import Clock, SQLiteEventLog
from evoledger.ledger.objects import DEFAULT_LARGE_THRESHOLD, OBJECTS_DIR_NAME, ObjectStore, check_threshold
from evoledger.ledger.records import GENESIS_HASH, PendingEvent, StoredEvent

if TYPE_CHECKING:
    from evoledger.ledger.events import EventBase
    from evoledger.ledger.signing import HeadSigner

__all__ = ["CURRENT_HEAD", "HeadSentinel", "Ledger", "RecordedEvent"]


class HeadSentinel(enum.Enum):
    """``CURRENT_HEAD``: append after whatever the head is now (safe: a writable Ledger is the only writer)."""

    CURRENT = "current"


CURRENT_HEAD: Final = HeadSentinel.CURRENT
ExpectedHead = str | Literal[HeadSentinel.CURRENT]


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An Event as recorded: the stored row and the parsed Event model."""

    stored: StoredEvent
    event: EventBase


class Ledger:
    """A Run's record. Build with :meth:`create` or :meth:`open`; use as a context manager."""

    def __init__(
        self, run_dir: Path, db: Database, lock: WriterLock | None, *, clock: Clock | None, large_threshold: int
    ) -> None:
        self.path: Final = run_dir
        self._db: Final = db
        self._lock: Final = lock
        self.manifest: Final = HeadManifest(run_dir / MANIFEST_NAME)
        self.objects: Final = ObjectStore(db, run_dir / OBJECTS_DIR_NAME, large_threshold=large_threshold)
        self.log: Final = SQLiteEventLog(db, clock=clock, manifest=self.manifest if db.writable else None)

    # -- lifecycle ---------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        run_dir: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        large_threshold: int = DEFAULT_LARGE_THRESHOLD,
    ) -> Ledger:
        """Create an empty ledger in ``run_dir`` (created if needed) and return it open for writing."""
        check_threshold(large_threshold)
        path = Path(run_dir)
        if path.exists() and not path.is_dir():
            raise InputError(f"cannot create a ledger in {path}: it is a file, not a directory")
        path.mkdir(parents=True, exist_ok=True)
        lock = WriterLock(path / LOCK_NAME)
        lock.acquire()
        try:
            db_path = path / DATABASE_NAME
            if db_path.exists() or (path / MANIFEST_NAME).exists():
                raise LedgerExistsError(
                    f"{path} already holds a record (a ledger); choose a new directory, or continue a Run there "
                    f"with 'evoledger resume {path}'"
                )
            for stale in (db_path.with_name(DATABASE_NAME + "-wal"), db_path.with_name(DATABASE_NAME + "-shm")):
                stale.unlink(missing_ok=True)  # never let a new file replay an old WAL
            db = Database.create(db_path)
            ledger = cls(path, db, lock, clock=clock, large_threshold=large_threshold)
            ledger.manifest.write(EMPTY_HEAD)
        except BaseException:
            lock.release()
            raise
        return ledger

    @classmethod
    def open(
        cls,
        run_dir: str | os.PathLike[str],
        *,
        writable: bool = False,
        clock: Clock | None = None,
        large_threshold: int = DEFAULT_LARGE_THRESHOLD,
    ) -> Ledger:
        """Open the ledger in ``run_dir``; read-only unless ``writable`` (which takes the writer lock).

        The log is compared with the head manifest: a truncated tail or a changed head raises
        :class:`IntegrityError` (run ``verify`` for the full report).
        """
        check_threshold(large_threshold)
        path = Path(run_dir)
        db_path = path / DATABASE_NAME
        if not db_path.is_file():
            if (path / MANIFEST_NAME).exists():
                raise IntegrityError(
                    f"{path} has a head manifest but no {DATABASE_NAME}: the ledger database was deleted; "
                    "restore it from a backup"
                )
            raise LedgerNotFoundError(
                f"no ledger in {path} ({db_path} does not exist); check the run directory, "
                "or create one with Ledger.create()"
            )
        lock = WriterLock(path / LOCK_NAME) if writable else None
        if lock is not None:
            lock.acquire()
        db: Database | None = None
        try:
            db = Database.open(db_path, writable=writable)
            ledger = cls(path, db, lock, clock=clock, large_threshold=large_threshold)
            ledger._check_manifest()
        except BaseException:
            if db is not None:
                db.close()
            if lock is not None:
                lock.release()
            raise
        return ledger

    def close(self) -> None:
        """Close the database and release the writer lock (idempotent)."""
        self._db.close()
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def writable(self) -> bool:
        return self._db.writable

    @property
    def database(self) -> Database:
        """The shared ``ledger.sqlite`` connection (for ``verify`` and other integrity tooling)."""
        return self._db

    def sign_heads(self, signer: HeadSigner) -> None:
        """Sign the current head now and every head after each later commit, into ``ledger.sig`` (writable only)."""
        self._db.require_writable("sign the head manifest")
        with self._db.lock:
            self.log.on_manifest = lambda head: signer.write(self.path, head)
            signer.write(self.path, self.log.head())

    # -- raw level ---------------------------------------------------------------------------------
    def head(self) -> Head:
        return self.log.head()

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic unit for Object puts/evictions and appends (nestable; manifest written on commit)."""
        return self._db.transaction()

    def append_records(
        self, pending: Sequence[PendingEvent], *, expected_head: ExpectedHead = CURRENT_HEAD
    ) -> list[StoredEvent]:
        """Append encoded events; ``expected_head`` defaults to the current head (we are the only writer)."""
        with self._db.lock:
            return self.log.append(pending, expected_head=self._resolve(expected_head))

    def records(
        self, from_seq: int = 0, *, visibility: str | None = None, kinds: Collection[str] | None = None
    ) -> Iterator[StoredEvent]:
        """Stream stored rows (see :meth:`SQLiteEventLog.read`)."""
        return self.log.read(from_seq, visibility=visibility, kinds=kinds)

    # -- typed level -------------------------------------------------------------------------------
    def append(self, events: Sequence[EventBase], *, expected_head: ExpectedHead = CURRENT_HEAD) -> list[RecordedEvent]:
        """Encode and append Event models atomically."""
        from evoledger.ledger.events import to_pending  # the schema is imported only when used

        batch = list(events)
        pending = [to_pending(event) for event in batch]
        stored = self.append_records(pending, expected_head=expected_head)
        return [RecordedEvent(row, event) for row, event in zip(stored, batch, strict=True)]

    def events(
        self, from_seq: int = 0, *, visibility: str | None = None, kinds: Collection[str] | None = None
    ) -> Iterator[RecordedEvent]:
        """Stream recorded Events parsed into their models (upcast to the current version)."""
        from evoledger.ledger.events import from_stored

        rows = self.log.read(from_seq, visibility=visibility, kinds=kinds)
        return (RecordedEvent(row, from_stored(row)) for row in rows)

    # -- internals ---------------------------------------------------------------------------------
    def _resolve(self, expected_head: ExpectedHead) -> str:
        if expected_head is HeadSentinel.CURRENT:
            return self.log.head().hash
        if expected_head is None:
            raise InputError(
                "expected_head=None is not allowed: pass the head hash you last read, or leave the "
                "default CURRENT_HEAD to append after the current head"
            )
        return expected_head

    def _check_manifest(self) -> None:
        recorded = self.manifest.read()
        actual = self.log.head()
        where = f"run `evoledger ledger verify {self.path}` for a full report"
        if recorded is None:
            if actual.count == 0:
                if self.writable:
                    self.manifest.write(actual)
                return
            raise IntegrityError(
                f"the head manifest {self.manifest.path} is missing but the log has {actual.count} events; "
                f"it was deleted. {where}"
            )
        if recorded == actual:
            return
        if recorded.count > actual.count:
            raise IntegrityError(
                f"the log in {self.path} is truncated: the head manifest records {recorded.count} events "
                f"but the log has {actual.count}; its last events were deleted. {where}"
            )
        if recorded.count == actual.count:
            raise IntegrityError(
                f"the log's head in {self.path} is {actual.hash} but the head manifest records "
                f"{recorded.hash} for the same {actual.count} events; the log was changed. {where}"
            )
        if self._hash_at(recorded.count - 1) != recorded.hash:
            raise IntegrityError(
                f"the head manifest of {self.path} ({recorded.count} events, {recorded.hash}) is not a "
                f"prefix of the log ({actual.count} events); the log was changed. {where}"
            )
        if self.writable:  # the process died between a commit and the manifest rewrite
            self.manifest.write(actual)

    def _hash_at(self, seq: int) -> str:
        if seq < 0:
            return GENESIS_HASH
        try:
            row = self._db.conn.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
        except SQLITE_ERRORS as exc:
            raise database_failure(exc, self._db.path, "reading the log") from exc
        return str(row[0]) if row is not None else ""
