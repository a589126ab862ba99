"""The single-writer lock of a Ledger: an exclusive ``flock`` on ``<run_dir>/ledger.lock``.

A writable open takes the lock without blocking; a second writer -- in another process, or a
second writable open in the same process -- gets :class:`LedgerLockedError` naming the lock
file and the holder's pid. Read-only opens never take it (SQLite's WAL lets them read while the
writer appends). The lock file is never deleted: deleting it would let two processes lock two
different inodes of the same name. The kernel releases ``flock`` locks when the holder dies.

The lock file is opened without following a link and refused unless it is a regular file, so a
planted ``ledger.lock`` link never truncates its target (:mod:`evoledger.ledger.run_files`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import LedgerLockedError, LedgerNotFoundError
from evoledger.ledger.run_files import open_file_at, open_root

__all__ = ["LOCK_NAME", "WriterLock"]

LOCK_NAME: Final = "ledger.lock"


class WriterLock:
    """An exclusive, non-blocking ``flock`` held from :meth:`acquire` until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path: Final = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LedgerLockedError`; records our pid in the file."""
        if self._fd is not None:
            return
        try:
            folder = open_root(self.path.parent)
        except FileNotFoundError:
            raise LedgerNotFoundError(
                f"cannot create the lock file {self.path}: its directory does not exist"
            ) from None
        try:
            fd = open_file_at(folder, self.path.name, os.O_RDWR | os.O_CREAT, self.path)
        finally:
            os.close(folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"process {holder}" if holder is not None else "another process (pid unknown)"
            raise LedgerLockedError(
                f"the ledger in {self.path.parent} is locked for writing by {who} (lock file {self.path}); "
                "only one writer may append at a time. Wait for it to finish, or open the ledger read-only."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.ftruncate(fd, 0)
            finally:
                os.close(fd)  # closing the descriptor releases the flock


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
