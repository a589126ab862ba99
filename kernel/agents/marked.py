"""Finding and ending every process of one Run's Agent by the environment entry the Host gave it.

A process group is not enough to find an Agent's processes: a child that calls ``setsid`` (a daemon,
``nohup``-style helpers, ``start_new_session=True``) leaves the group and would outlive the Agent, still
able to edit the workspace or call the Session. Every process the Agent starts inherits its environment,
and the Host gives each Agent an entry no other Run shares (``EVOLEDGER_WORKSPACE=<this Run's workspace>``).
:func:`end_marked_processes` ends every process whose environment holds that entry, read from
``/proc/<pid>/environ`` (a process whose environment cannot be read, e.g. another user's, is never touched).

Each process is pinned with a pidfd before its environment is read, and signalled through that pidfd, so
a pid reused between the check and the signal is never hit. Processes are first stopped (SIGSTOP), so one
that forks in a loop cannot outrun the sweep, then killed; sweeps repeat until none is left.

Limits (``docs/security.md``): a process that clears or replaces its environment at ``exec`` (``env -i``)
no longer carries the entry and is not found; only isolation (``--agent-isolation bwrap``) contains it.
Without ``/proc`` nothing is found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["end_marked_processes", "marked_processes"]

_SWEEPS: Final = 20


def _holds(entry: Path, marker: bytes) -> bool:
    try:
        stat = (entry / "stat").read_bytes()
        environ = (entry / "environ").read_bytes()
    except OSError:
        return False  # gone, or another user's: never ours to touch
    if stat.rpartition(b")")[2].split()[:1] == [b"Z"]:
        return False  # already dead, waiting to be reaped
    return marker in environ.split(b"\0")


def marked_processes(marker: str, *, proc: Path = Path("/proc")) -> list[int]:
    """The pids of live processes (not this one) whose environment holds ``marker`` (``NAME=value``)."""
    return [pid for pid, _ in _marked(marker.encode(), proc)]


def _marked(marker: bytes, proc: Path) -> Iterator[tuple[int, Path]]:
    if not (proc / "self").exists():
        return
    me = os.getpid()
    try:
        entries = list(os.scandir(proc))
    except OSError:
        return
    for item in entries:
        if not item.name.isdigit() or int(item.name) == me:
            continue
        entry = Path(item.path)
        if _holds(entry, marker):
            yield int(item.name), entry


def _signal(pid: int, entry: Path, marker: bytes, sig: int) -> bool:
    """Send ``sig`` to ``pid`` if, pinned by a pidfd, it still holds ``marker``; whether it was sent."""
    pidfd_open = getattr(os, "pidfd_open", None)
    send = getattr(signal, "pidfd_send_signal", None)
    if pidfd_open is None or send is None:
        if not _holds(entry, marker):
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            return True
        return False
    try:
        pidfd = pidfd_open(pid)
    except OSError:
        return False  # gone
    try:
        if not _holds(entry, marker):  # the pid was reused since it was listed
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            send(pidfd, sig)
            return True
        return False
    finally:
        os.close(pidfd)


def end_marked_processes(marker: str, *, proc: Path = Path("/proc")) -> int:
    """SIGKILL every process whose environment holds ``marker`` (stopping them all first); how many were ended."""
    raw = marker.encode()
    ended: set[int] = set()
    for _ in range(_SWEEPS):
        found = list(_marked(raw, proc))
        if not found:
            break
        for pid, entry in found:
            _signal(pid, entry, raw, signal.SIGSTOP)
        for pid, entry in found:
            if _signal(pid, entry, raw, signal.SIGKILL):
                ended.add(pid)
        time.sleep(0.01)  # let the kernel finish them before the next sweep
    return len(ended)
