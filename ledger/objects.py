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

**Bounded decoding.** A run directory may come from someone else, and a zstd frame of a few
kilobytes can declare gigabytes. An Object is therefore decompressed as a stream, its digest
computed while streaming: it may never yield more bytes than its row records (and the frame must
declare exactly that size), and no Object above ``max_object_bytes`` (:data:`MAX_OBJECT_BYTES` by
default) is decompressed at all: both raise :class:`ObjectOversizeError`. :meth:`ObjectStore.check`
verifies an Object holding one chunk in memory; :meth:`ObjectStore.get` holds at most the recorded
size. Object files are opened relative to a descriptor of the run directory, never through a link
and never from a fifo or device (:mod:`evoledger.ledger.run_files`), and written and deleted the same way.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
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
    ObjectOversizeError,
    StorageFullError,
    UnsafePathError,
)
from evoledger.ledger.object_decoding import BOUND_SQL, compressed_bound, decode_small, decode_stream
from evoledger.ledger.run_files import check_entry_kind, open_dir_at, open_file_at, open_root, write_file_at

__all__ = [
    "DEFAULT_LARGE_THRESHOLD",
    "MAX_OBJECT_BYTES",
    "OBJECTS_DIR_NAME",
    "ObjectEntry",
    "ObjectState",
    "ObjectStore",
    "check_threshold",
]

DEFAULT_LARGE_THRESHOLD: Final = 1 << 20
OBJECTS_DIR_NAME: Final = "objects"
_LEVEL: Final = 3
MAX_OBJECT_BYTES: Final = 1 << 30
"""The global cap: no Object larger than this (1 GiB) is decompressed, whatever its row and frame declare."""
_ONE_SHOT: Final = 1 << 22

ObjectState = Literal["inline", "file", "evicted"]


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """One row of the store: its digest, raw size and where its bytes are."""

    digest: str
    size: int
    state: ObjectState


class ObjectStore:
    """Objects of one Ledger, sharing the Ledger's SQLite connection."""

    def __init__(
        self,
        db: Database,
        objects_dir: Path,
        *,
        large_threshold: int = DEFAULT_LARGE_THRESHOLD,
        max_object_bytes: int = MAX_OBJECT_BYTES,
    ) -> None:
        check_threshold(large_threshold)
        if type(max_object_bytes) is not int or max_object_bytes < 0:
            raise InputError(f"max_object_bytes must be a non-negative int of bytes, got {max_object_bytes!r}")
        self._db: Final = db
        self.objects_dir: Final = objects_dir
        self.large_threshold: Final = large_threshold
        self.max_object_bytes: Final = max_object_bytes
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
        if row is not None and row[0] != "evicted" and (row[0] != "file" or self._file_present(digest)):
            return
        self._write_file(digest, self._compressor.compress(blob))
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
                        db.after_commit(f"unlink {digest}", partial(self._unlink_file, digest))
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
        :class:`ObjectEvictedError` (evicted on purpose), :class:`ObjectOversizeError` (its frame declares or
        yields more than its recorded size, or it is above the global cap) or :class:`IntegrityError` (bytes
        damaged, or its file is a link, fifo or device). At most the recorded size is held in memory.
        """
        chunks: list[bytes] = []
        self._stream(digest, chunks.append)
        return b"".join(chunks)

    def check(self, digest: str) -> int:
        """Check the Object's bytes against ``digest`` while streaming them (one chunk in memory); its size.

        Raises what :meth:`get` raises.
        """
        return self._stream(digest, None)

    def _stream(self, digest: str, sink: Callable[[bytes], object] | None) -> int:
        _check_digest(digest)
        row = self._row(digest, with_data=True)
        if row is None:
            raise ObjectMissingError(f"no Object {digest} in the store; check the digest")
        size, location, data = row
        if location == "evicted":
            raise ObjectEvictedError(
                f"Object {digest} was evicted by bulk retention; its bytes are gone but its digest stays in the log"
            )
        if type(size) is not int or size < 0:
            raise IntegrityError(f"the objects row of {digest} is damaged (size {size!r})")
        if size > self.max_object_bytes:
            raise ObjectOversizeError(
                f"Object {digest} records {size} bytes, above the cap of {self.max_object_bytes} bytes: it is not "
                "decompressed (a small zstd frame can declare gigabytes); the run directory was crafted or damaged"
            )
        bound = compressed_bound(size)
        if location == "inline":
            if type(data) is not bytes:
                raise IntegrityError(f"the objects row of {digest} is damaged (no inline bytes within the bound)")
            if size <= _ONE_SHOT:  # small: one allocation of the checked size is fastest
                return decode_small(self._decompressor, digest, size, data, sink)
            return decode_stream(self._decompressor, digest, size, io.BytesIO(data), sink)
        if location != "file":
            raise IntegrityError(f"the objects row of {digest} is damaged (location {location!r})")
        fd = self._open_file(digest, bound)
        with os.fdopen(fd, "rb", buffering=0) as source:
            return decode_stream(self._decompressor, digest, size, source, sink)

    def _open_file(self, digest: str, bound: int) -> int:
        """A descriptor of the Object's file: a regular file reached without a link, at most ``bound`` bytes."""
        path = self.path_for(digest)
        try:
            fd = self._open_relative(digest, os.O_RDONLY)
        except FileNotFoundError:
            raise ObjectMissingError(
                f"Object {digest} should be in {path} but the file is missing and no eviction was "
                "recorded; the run directory was damaged"
            ) from None
        except UnsafePathError as exc:
            raise IntegrityError(f"cannot read Object {digest}: {exc}") from None
        except OSError as exc:
            raise IntegrityError(f"cannot read Object file {path}: {exc}") from exc
        length = os.fstat(fd).st_size
        if length > bound:
            os.close(fd)
            raise ObjectOversizeError(
                f"Object file {path} has {length} bytes, more than a zstd frame of the recorded size can take; "
                "it was replaced or damaged"
            )
        return fd

    def _open_relative(self, digest: str, flags: int) -> int:
        folder = self._folder(digest, create=False)
        if folder is None:
            raise FileNotFoundError(digest)
        try:
            return open_file_at(folder, self.path_for(digest).name, flags, self.path_for(digest))
        finally:
            os.close(folder)

    def _folder(self, digest: str, *, create: bool) -> int | None:
        """A descriptor of ``objects/ab/`` (``None`` when absent and not ``create``), reached without a link."""
        root = open_root(self.objects_dir.parent)
        try:
            parts = [self.objects_dir.name, digest[7:9]]
            return open_dir_at(root, parts, self.objects_dir.parent, create=create)
        finally:
            os.close(root)

    def _file_present(self, digest: str) -> bool:
        try:
            os.close(self._open_relative(digest, os.O_RDONLY))
        except (FileNotFoundError, UnsafePathError):
            return False  # a planted link in the way is replaced by the write
        return True

    def _write_file(self, digest: str, data: bytes) -> None:
        path = self.path_for(digest)
        try:
            folder = self._folder(digest, create=True)
            assert folder is not None  # created
            try:
                write_file_at(folder, path.name, data, path, tmp=f".{path.name}.{os.getpid()}.tmp")
            finally:
                os.close(folder)
        except UnsafePathError as exc:
            raise IntegrityError(f"cannot write Object file {path}: {exc}") from None
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StorageFullError(
                    f"no space left to write Object file {path}: nothing was recorded; free disk space, then resume."
                ) from exc
            raise IntegrityError(f"cannot write Object file {path}: {exc}; check disk space and permissions") from exc

    def _unlink_file(self, digest: str) -> None:
        """Delete an evicted Object's file (never through a link: a link in the way is removed itself)."""
        try:
            folder = self._folder(digest, create=False)
        except (UnsafePathError, OSError):
            return  # a folder replaced by a link: nothing of ours is behind it
        if folder is None:
            return
        try:
            name = self.path_for(digest).name
            if check_entry_kind(folder, name) not in (None,):
                os.unlink(name, dir_fd=folder)
        except OSError:
            pass
        finally:
            os.close(folder)

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
        # the inline bytes only when no longer than a frame of the recorded size can be (SQLite knows the length)
        columns = f"size, location, CASE WHEN {BOUND_SQL} THEN data END" if with_data else "size, location"
        with self._db.lock:
            try:
                row: tuple[object, ...] | None = self._db.conn.execute(
                    f"SELECT {columns} FROM objects WHERE digest = ?", (digest,)
                ).fetchone()
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, self._db.path, f"reading Object {digest}") from exc
        return row


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
