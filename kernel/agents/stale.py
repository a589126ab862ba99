"""Stopping an Agent that a dead Host left running, without ever stopping someone else's processes.

An Agent runs in its own process group (its pgid is its pid), and ``agent-started`` records that pid.
When ``evoledger resume`` finds an Agent still marked running, the pid may since have been reused by an
unrelated process (after a reboot, say): killing its group blindly could stop anything. So the group
is stopped only when the process holding that pid is the Agent, recognised by a variable of the
environment the Host gave it (``EVOLEDGER_WORKSPACE=<this Run's workspace>``, which no other Run shares):

- the process is alive and its environment holds the marker: the Agent; its group is stopped;
- alive without the marker, or unreadable (another user's): not ours; left alone;
- gone (or a zombie): any process still in group ``pid`` is the Agent's child, since Linux does not
  reuse a pid while a process group of that id exists; the group is stopped.

Without ``/proc`` (not Linux) nothing can be checked and the group is stopped as before.

The group is not all of the Agent: a child that called ``setsid`` (or an Agent that re-launched itself in a
new session) left it. So, in every case, each process whose environment still holds the marker is stopped
too (``kernel.agents.marked``, pinned by a pidfd so a reused pid is never hit).
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Literal

from evoledger.kernel.agents.marked import end_marked_processes

__all__ = ["StaleAgentOutcome", "stop_stale_agent_group"]

StaleAgentOutcome = Literal["stopped", "not_ours"]


def stop_stale_agent_group(pid: int, marker: str, *, proc: Path = Path("/proc")) -> StaleAgentOutcome:
    """SIGKILL process group ``pid`` if it is the Agent whose environment holds ``marker`` (``NAME=value``).

    Every process holding ``marker`` is killed as well, whichever group or session it is in; the outcome
    says what became of group ``pid``.
    """
    outcome: StaleAgentOutcome = "stopped"
    if _holds_someone_else(pid, marker.encode(), proc):
        outcome = "not_ours"
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    end_marked_processes(marker, proc=proc)
    return outcome


def _holds_someone_else(pid: int, marker: bytes, proc: Path) -> bool:
    if not (proc / "self").exists():
        return False  # no procfs: cannot tell
    entry = proc / str(pid)
    try:
        stat = (entry / "stat").read_bytes()
        environ = (entry / "environ").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return False  # the leader is gone: what is left of group pid is the Agent's
    except OSError:
        return True  # another user's process (or hidden from us): not ours to stop
    state = stat.rpartition(b")")[2].split()[:1]
    if state == [b"Z"]:
        return False  # a dead leader not yet reaped: its group is still the Agent's
    return marker not in environ.split(b"\0")
