"""Checks 1 and 2 in a forked second process while this one folds the projections (check 3).

On a large log the integrity walk (hashing every row) and the protocol audit (parsing every payload)
take about as long as folding and comparing the projections, and none of them needs the others'
results. :func:`start_side_checks` forks a child that inherits the rows already read (copy-on-write,
nothing is sent to it), opens its own read-only connection to the database, runs ``verify`` and
the audit, and sends back their two reports (pickled through a pipe); meanwhile this process
folds the projections. The reports are exactly those of the serial path (a test compares them).
No SQLite connection crosses the fork (SQLite forbids it): this process closes its own before
forking and opens it again after.

A fork is only tried where it is safe and pays: the platform can fork, no other thread runs in
this process (a forked child gets only the calling thread; another thread's locks would stay taken
in it), and the log is large. If the child cannot start, dies or fails, :meth:`SideChecks.collect`
returns ``None`` and the caller runs the checks itself. The child never returns into the caller's
code: whatever happens it ends with ``os._exit``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.kernel.replay.log_pass import audit_log
from evoledger.kernel.replay.record import RunRecord
from evoledger.ledger.database import DATABASE_NAME, Database
from evoledger.ledger.objects import OBJECTS_DIR_NAME, ObjectStore
from evoledger.ledger.verify import VerifyReport, verify_opened
from evoledger.projections.audit import AuditReport

__all__ = ["MIN_ROWS", "SideChecks", "SideResults", "can_fork", "start_side_checks"]

MIN_ROWS: Final = 20_000
"""Below this many rows a second process costs more than it saves (forking a big process takes ~10 ms)."""


@dataclass(frozen=True, slots=True)
class SideResults:
    """What the child found: the integrity report and the protocol audit, and how long each took."""

    integrity: VerifyReport
    integrity_seconds: float
    audit: AuditReport
    audit_seconds: float


def can_fork() -> bool:
    """Whether this process may fork a side process now (a POSIX fork, and no other thread running)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def _side(root: Path, record: RunRecord, *, episode_cap: int, max_problems: int) -> SideResults:
    start = time.perf_counter()
    db = Database.open(root / DATABASE_NAME, writable=False)  # never the parent's connection
    try:
        objects = ObjectStore(db, root / OBJECTS_DIR_NAME)
        integrity = verify_opened(root, db, objects, record.rows, max_problems=max_problems)
    finally:
        db.close()
    middle = time.perf_counter()
    audit = audit_log(record.rows, episode_cap=episode_cap, max_violations=max_problems)
    return SideResults(integrity, middle - start, audit, time.perf_counter() - middle)


class SideChecks:
    """A running side process; :meth:`collect` its results exactly once (or :meth:`abandon` it)."""

    def __init__(self, pid: int, reader: int) -> None:
        self.pid, self._reader = pid, reader

    def collect(self) -> SideResults | None:
        """Wait for the child; its results, or ``None`` when it failed (the caller then runs the checks)."""
        chunks = []
        try:
            with os.fdopen(self._reader, "rb") as stream:
                chunks.append(stream.read())
        finally:
            _, status = os.waitpid(self.pid, 0)
        data = b"".join(chunks)
        if not data or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        try:
            results = pickle.loads(data)
        except Exception:  # a torn message: the caller runs the checks itself
            return None
        return results if isinstance(results, SideResults) else None

    def abandon(self) -> None:
        """Stop the child (the caller failed before collecting)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.close(self._reader)
        os.waitpid(self.pid, 0)


def start_side_checks(
    root: Path, record: RunRecord, *, episode_cap: int, max_problems: int, force: bool = False
) -> SideChecks | None:
    """Fork the side process for ``record`` (see the module docstring); ``None`` when not worth it or not safe.

    ``force`` forks whatever the log's size (tests use it); safety is never forced.
    """
    if not can_fork() or (len(record.rows) < MIN_ROWS and not force):
        return None
    reader, writer = os.pipe()
    record.close()  # no SQLite connection crosses the fork: each process opens its own
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        record.reopen()
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(reader)
            data = pickle.dumps(_side(root, record, episode_cap=episode_cap, max_problems=max_problems))
            view = memoryview(data)
            while view:
                view = view[os.write(writer, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    try:
        record.reopen()
    except BaseException:
        SideChecks(pid, reader).abandon()
        raise
    return SideChecks(pid, reader)
