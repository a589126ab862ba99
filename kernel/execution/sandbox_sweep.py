"""The end of an Episode inside a bubblewrap sandbox: nothing of it may survive into the next one.

Run by the sandboxed zygote, which is pid 1 of the sandbox's pid namespace (see :mod:`~.zygote`). ``kill(-1,
SIGKILL)`` from there reaches every other process of the namespace at once (the kernel walks the process list
under a lock that ``fork`` also takes, so a fork bomb cannot outrun it), including a Policy process that called
``setsid``. Being the namespace's init, the zygote then reaps them all. The sandbox's writable places (``/tmp``,
``/dev/shm``) are emptied and System V IPC objects removed, so one Episode's Policy cannot leave anything for the
next one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Final

__all__ = ["sweep_sandbox"]

_WRITABLE: Final = ("/tmp", "/dev/shm")
_IPC_RMID: Final = 0
_REAP_SECONDS: Final = 10.0


def _reap_all(wanted: int | None) -> int:
    """Reap every child (orphans included) until none is left; the wait status of ``wanted`` (-1 if unseen)."""
    status_of_wanted = -1
    deadline = time.monotonic() + _REAP_SECONDS
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status_of_wanted
        if pid == 0:
            if time.monotonic() > deadline:
                return status_of_wanted
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)  # anything forked in between
            time.sleep(0.001)
            continue
        if pid == wanted:
            status_of_wanted = status


def _empty(directory: str) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()


def _remove_ipc_objects() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for table, remove in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
        with contextlib.suppress(OSError):
            lines = Path(f"/proc/sysvipc/{table}").read_text(encoding="ascii").splitlines()[1:]
            for line in lines:
                fields = line.split()
                if len(fields) > 1:
                    identifier = int(fields[1])
                    if table == "sem":
                        remove(identifier, 0, _IPC_RMID)
                    else:
                        remove(identifier, _IPC_RMID, None)


def sweep_sandbox(wanted: int | None) -> int:
    """Kill and reap every process of the sandbox but the caller, clear its writable places; ``wanted``'s status."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    status = _reap_all(wanted)
    for directory in _WRITABLE:
        _empty(directory)
    _remove_ipc_objects()
    return status
