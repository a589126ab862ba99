"""The content-addressed Object store: bytes addressed by ``sha256:<hex>`` of the raw bytes.

Objects live in the ``objects`` table of ``ledger.sqlite``, zstd-compressed (level 3). Objects of
at least ``large_threshold`` raw bytes (1 MiB by default) are kept as files
``<run_dir>/objects/ab/<hex>.zst`` instead (written atomically and fsynced *before* their row is
inserted); the interface is the same. Each row is in one of three states:

``inline``  the compressed bytes are in the row;
``file``    the compressed bytes are in the row's file;
``evicted`` a tombstone: the bytes were deleted on purpose (bulk retention); the size remains.

Every read checks the bytes against their digest. :meth:`ObjectStore.put_many` writes a batch in
one transaction; inside :meth:`Database.transaction` (``Ledger.transaction()``) puts join the
caller's transaction, so Objects commit together with -- never after -- the Events that reference
them. A caller-supplied digest that is not ``sha256:`` + 64 lowercase hex digits can never name an
Object, so ``get``/``size``/``evict`` raise :class:`ObjectMissingError` naming the malformed value
(``has`` answers ``False``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final, Literal

import zstandard
from evoledger.ledger.canonical import digest_of, is_digest
from evoledger.ledger.database import SQLITE_ERRORS, Database, database_failure
from evoledger.ledger.errors import (
    InputError,
    IntegrityError,
    ObjectEvictedError,
    ObjectMissingError,
    StorageFullError,
)

__all__ = [
    "DEFAULT_LARGE_THRESHOLD",
    "OBJECTS_DIR_NAME",
    "ObjectEntry",
    "ObjectState",
    "ObjectStore",
    "check_threshold",
]

DEFAULT_LARGE_THRESHOLD: Final = 1 << 20
OBJECTS_DIR_NAME: Final = "objects"
_LEVEL: Final = 3

ObjectState = Literal["inline", "file", "evicted"]


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """One row of the store: its digest, raw size and where its bytes are."""

    digest: str
    size: int
    state: ObjectState


class ObjectStore:
    """Objects of one Ledger, sharing the Ledger's SQLite connection."""

    def __init__(self, db: Database, objects_dir: Path, *, large_threshold: int = DEFAULT_LARGE_THRESHOLD) -> None:
        check_threshold(large_threshold)
        self._db: Final = db
        self.objects_dir: Final = objects_dir
        self.large_threshold: Final = large_threshold
        self._compressor: Final = zstandard.ZstdCompressor(level=_LEVEL, write_content_size=True)
        self._decompressor: Final = zstandard.ZstdDecompressor()

    # -- writing -----------------------------------------------------------------------------------
    def put(self, data: bytes | bytearray | memoryview) -> str:
        """Store ``data`` (idempotent) and return its digest ``sha256:<hex>`` of the raw bytes."""
        return self.put_many((data,))[0]

    def put_many(self, items: Iterable[bytes | bytearray | memoryview]) -> list[str]:
        """Store many Objects in one transaction; returns their digests in order.

        Storing bytes whose Object was evicted restores them.
        """
        blobs = [_as_bytes(item) for item in items]
        digests = [digest_of(blob) for blob in blobs]
        db = self._db
        with db.lock, db.transaction():
            small: list[tuple[str, int, bytes]] = []
            try:
                for digest, blob in zip(digests, blobs, strict=True):
                    if len(blob) < self.large_threshold:
                        small.append((digest, len(blob), self._compressor.compress(blob)))
                    else:
                        self._put_large(digest, blob)
                db.conn.executemany(
                    "INSERT INTO objects(digest, size, location, data) VALUES (?, ?, 'inline', ?) "
                    "ON CONFLICT(digest) DO UPDATE SET size = excluded.size, location = 'inline', "
                    "data = excluded.data WHERE objects.location = 'evicted'",
                    small,
                )
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, db.path, "storing Objects") from exc
        return digests

    def _put_large(self, digest: str, blob: bytes) -> None:
        row = self._db.conn.execute("SELECT location FROM objects WHERE digest = ?", (digest,)).fetchone()
        path = self.path_for(digest)
        if row is not None and row[0] != "evicted" and (row[0] != "file" or path.exists()):
            return
        _write_atomically(path, self._compressor.compress(blob))
        self._db.conn.execute(
            "INSERT INTO objects(digest, size, location, data) VALUES (?, ?, 'file', NULL) "
            "ON CONFLICT(digest) DO UPDATE SET size = excluded.size, location = 'file', data = NULL",
            (digest, len(blob)),
        )

    def evict(self, digest: str) -> None:
        """Delete an Object's bytes, leaving a tombstone (evicting twice is fine).

        Record the eviction in the log too (a ``bulk-evicted`` event listing the digest), in the
        same ``Ledger.transaction()``; verify reports a tombstone without such a record.
        """
        self.evict_many((digest,))

    def evict_many(self, digests: Iterable[str]) -> None:
        """Evict several Objects in one transaction; unknown digests raise :class:`ObjectMissingError`."""
        wanted = list(digests)
        for digest in wanted:
            _check_digest(digest)
        db = self._db
        with db.lock, db.transaction():
            try:
                for digest in wanted:
                    row = db.conn.execute("SELECT location FROM objects WHERE digest = ?", (digest,)).fetchone()
                    if row is None:
                        raise ObjectMissingError(
                            f"cannot evict Object {digest}: it is not in the store; check the digest"
                        )
                    if row[0] == "evicted":
                        continue
                    db.conn.execute("UPDATE objects SET location = 'evicted', data = NULL WHERE digest = ?", (digest,))
                    if row[0] == "file":
                        path = self.path_for(digest)
                        db.after_commit(f"unlink {digest}", partial(path.unlink, missing_ok=True))
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, db.path, "evicting Objects") from exc

    # -- reading -----------------------------------------------------------------------------------
    def has(self, digest: str) -> bool:
        """Whether the Object's bytes are stored (``False`` when evicted, unknown or malformed)."""
        if not is_digest(digest):
            return False
        row = self._row(digest)
        return row is not None and row[1] != "evicted"

    def state(self, digest: str) -> ObjectState | None:
        """``inline``, ``file``, ``evicted``, or ``None`` when the store has no such Object."""
        _check_digest(digest)
        row = self._row(digest)
        if row is None:
            return None
        state = row[1]
        if state not in ("inline", "file", "evicted"):
            raise IntegrityError(f"the objects row of {digest} has an unknown location {state!r}")
        return state

    def size(self, digest: str) -> int:
        """The raw size in bytes (still known after eviction)."""
        _check_digest(digest)
        row = self._row(digest)
        if row is None:
            raise ObjectMissingError(f"no Object {digest} in the store; check the digest")
        if type(row[0]) is not int:
            raise IntegrityError(f"the objects row of {digest} is damaged (size {row[0]!r})")
        return row[0]

    def get(self, digest: str) -> bytes:
        """The Object's raw bytes, checked against ``digest``.

        Raises :class:`ObjectMissingError` (unknown digest, or its file vanished without an eviction),
        :class:`ObjectEvictedError` (evicted on purpose) or :class:`IntegrityError` (bytes damaged).
        """
        _check_digest(digest)
        row = self._row(digest, with_data=True)
        if row is None:
            raise ObjectMissingError(f"no Object {digest} in the store; check the digest")
        size, location, data = row
        if location == "evicted":
            raise ObjectEvictedError(
                f"Object {digest} was evicted by bulk retention; its bytes are gone but its digest stays in the log"
            )
        if location == "file":
            path = self.path_for(digest)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                raise ObjectMissingError(
                    f"Object {digest} should be in {path} but the file is missing and no eviction was "
                    "recorded; the run directory was damaged"
                ) from None
            except OSError as exc:
                raise IntegrityError(f"cannot read Object file {path}: {exc}") from exc
        elif location != "inline" or type(data) is not bytes:
            raise IntegrityError(f"the objects row of {digest} is damaged (location {location!r})")
        if type(size) is not int:
            raise IntegrityError(f"the objects row of {digest} is damaged (size {size!r})")
        return self._decode(digest, size, data)

    def entries(self) -> Iterator[ObjectEntry]:
        """Every row of the store in digest order (streamed in chunks)."""
        last = ""
        while True:
            with self._db.lock:
                try:
                    rows = self._db.conn.execute(
                        "SELECT digest, size, location FROM objects WHERE digest > ? ORDER BY digest LIMIT 1024",
                        (last,),
                    ).fetchall()
                except SQLITE_ERRORS as exc:
                    raise database_failure(exc, self._db.path, "listing Objects") from exc
            if not rows:
                return
            for digest, size, location in rows:
                if type(digest) is not str or type(size) is not int or location not in ("inline", "file", "evicted"):
                    raise IntegrityError(
                        f"the objects table of {self._db.path} has a damaged row {digest!r}; run verify"
                    )
                yield ObjectEntry(digest, size, location)
            last = rows[-1][0]

    def path_for(self, digest: str) -> Path:
        """Where a large Object's compressed bytes live (whether or not it is stored there)."""
        hexpart = digest[7:]
        return self.objects_dir / hexpart[:2] / f"{hexpart}.zst"

    # -- internals ---------------------------------------------------------------------------------
    def _row(self, digest: str, *, with_data: bool = False) -> Sequence[object] | None:
        columns = "size, location, data" if with_data else "size, location"
        with self._db.lock:
            try:
                row: tuple[object, ...] | None = self._db.conn.execute(
                    f"SELECT {columns} FROM objects WHERE digest = ?", (digest,)
                ).fetchone()
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, self._db.path, f"reading Object {digest}") from exc
        return row

    def _decode(self, digest: str, size: int, data: bytes) -> bytes:
        try:
            declared = zstandard.frame_content_size(data)
        except zstandard.ZstdError as exc:
            raise IntegrityError(f"Object {digest} is damaged: its zstd frame is unreadable ({exc})") from None
        if declared != size:
            raise IntegrityError(
                f"Object {digest} is damaged: its zstd frame declares {declared} bytes but the store recorded {size}"
            )
        try:
            raw = self._decompressor.decompress(data)
        except zstandard.ZstdError as exc:
            raise IntegrityError(f"Object {digest} is damaged: zstd cannot decompress it ({exc})") from None
        if digest_of(raw) != digest:
            raise IntegrityError(
                f"Object {digest} is damaged: its bytes hash to {digest_of(raw)}; restore the run from a backup"
            )
        return raw


def check_threshold(large_threshold: object) -> None:
    """Validate the size from which Objects are kept as files."""
    if type(large_threshold) is not int or large_threshold < 1:
        raise InputError(f"large_threshold must be a positive int of bytes, got {large_threshold!r}")


def _as_bytes(item: object) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, bytearray | memoryview):
        return bytes(item)
    raise InputError(f"an Object must be bytes, got {type(item).__name__}; encode it first (e.g. canonical_json)")


def _check_digest(digest: object) -> None:
    if not is_digest(digest):
        raise ObjectMissingError(
            f"{digest!r:.100} is not an Object digest (expected 'sha256:' followed by 64 lowercase hex "
            "digits), so no Object has it; pass the value put() returned"
        )


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFullError(
                f"no space left to write Object file {path}: nothing was recorded; free disk space, then resume."
            ) from exc
        raise IntegrityError(f"cannot write Object file {path}: {exc}; check disk space and permissions") from exc
