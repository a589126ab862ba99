"""Keep the execution layer's processes from wedging their executor or outliving it.

A Policy runs as the same user as its worker (with ``--isolation local``), so it can signal the worker or the
zygote: stop them (``SIGSTOP``), or kill them. And the caller can be ended by ``SIGTERM`` or Ctrl-C at any moment.
Four guards:

* :func:`process_state` reads a process's state from ``/proc``; :func:`is_stopped` tells a stopped process (``T``,
  or ``t`` under a tracer) from one that is merely slow. The coordinator polls its busy workers with it and kills a
  stopped one at once (the Episode is the Policy's fault), instead of waiting for the wall-clock watchdog.
* :func:`die_with_parent` (``PR_SET_PDEATHSIG``) is called right after a fork by the zygote and by each Policy
  child: when their parent (worker, zygote) dies however it dies, the kernel kills them too, even if stopped.
  Both parents are single-threaded, so "the parent thread exited" means "the parent exited".
* :func:`kill_group` kills a process group and its leader: a worker's (the worker, its zygote and a sandbox's
  ``bwrap``), and a Policy child's (a child that has not called ``setsid`` yet is still killed itself).
* :func:`guard_workers` / :func:`release_workers` keep the set of live worker process groups; on the first
  executor created in the main thread a ``SIGTERM`` handler is installed that kills them all and then does what
  ``SIGTERM`` did before (by default: end the process). Ctrl-C needs no handler: ``KeyboardInterrupt`` unwinds to
  :meth:`LocalExecutor.close`, which kills what does not stop in time.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
from types import FrameType
from typing import Any, Final

__all__ = [
    "broken_state",
    "die_with_parent",
    "guard_workers",
    "is_stopped",
    "kill_group",
    "prepare_to_fork",
    "process_state",
    "release_workers",
]

_PR_SET_PDEATHSIG: Final = 1
_STOPPED_STATES: Final = frozenset("Tt")
_live_groups: set[int] = set()
_lock = threading.Lock()
_installed = False


def _stat_tail(pid: int) -> bytes | None:
    """``/proc/PID/stat`` from the state field on (None if the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself contain ") "; the state follows the last ")".
    return text[text.rfind(b")") + 2 :]


def process_state(pid: int) -> str | None:
    """The one-letter state of process ``pid`` (``R``, ``S``, ``T``, ``Z``, ...), or None if it is gone."""
    tail = _stat_tail(pid)
    return None if tail is None else tail[:1].decode("ascii", "replace") or None


def _signal_mask(status: str, *names: str) -> int:
    """The union of the named signal masks (``SigPnd:``, ``SigIgn:``, ...) of a ``/proc/PID/status`` text."""
    mask = 0
    for line in status.splitlines():
        if line.startswith(names):
            mask |= int(line.split()[1], 16)
    return mask


def _is_ending(pid: int) -> bool:
    """Whether ``pid`` is being ended (by a signal it took, or exiting): it no longer shows the signal that ends it
    as pending, and is not a zombie yet."""
    tail = _stat_tail(pid)
    if tail is None:
        return True
    fields = tail.split()
    return len(fields) > 6 and int(fields[6]) & _PF_ENDING != 0


def broken_state(pid: int, *, asleep_counts: bool = True) -> str | None:
    """Why process ``pid`` can no longer serve, in words (``has ended``, ``was stopped``), or None if it can.

    Counts a signal that is sent but not yet acted on (the target has not run since), so a caller that has just seen
    the sender end gets the same answer however busy the machine is: SIGKILL, a stop signal, and any other signal
    it does not ignore (a SIGTERM can wait in the process's shared pending set while it runs, and end it later).
    Even a process still shown asleep may have one: its wake-up can wait on another CPU. ``asleep_counts=False``
    takes an asleep process at its word (for the zygote: reading its status would wait for a fork in progress)."""
    state = process_state(pid)
    if state == "S" and not asleep_counts:
        return None
    if state is None or state in ("Z", "X"):
        return "has ended"
    if state in _STOPPED_STATES:
        return "was stopped by a signal"
    try:  # /proc/PID/status (slower: it waits for a fork in progress) tells more
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            status = handle.read()
    except OSError:
        return "has ended"
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    pending = _signal_mask(status, "SigPnd:", "ShdPnd:")
    if state in ("Z", "X") or pending & _bit(signal.SIGKILL) or _is_ending(pid):
        return "has ended"
    if state in _STOPPED_STATES or pending & _STOP_SIGNALS:
        return "was stopped by a signal"
    if pending & ~(_signal_mask(status, "SigIgn:") | _IGNORED_BY_DEFAULT):
        return "was sent a signal"
    return None


def _bit(sig: signal.Signals) -> int:
    return 1 << (int(sig) - 1)


_STOP_SIGNALS: Final = _bit(signal.SIGSTOP) | _bit(signal.SIGTSTP) | _bit(signal.SIGTTIN) | _bit(signal.SIGTTOU)
_IGNORED_BY_DEFAULT: Final = _bit(signal.SIGCHLD) | _bit(signal.SIGURG) | _bit(signal.SIGWINCH) | _bit(signal.SIGCONT)
"""Signals whose default action is to do nothing: pending, they change nothing for a process that has no handler."""
_PF_ENDING: Final = 0x4 | 0x400
"""The kernel's per-process flags (``/proc/PID/stat``'s ninth field) of a process that has begun to exit
(``PF_EXITING``) or is being ended by a signal (``PF_SIGNALED``)."""


def is_stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped by a signal or by a tracer (it will not run until someone continues it)."""
    return process_state(pid) in _STOPPED_STATES


@functools.cache
def _prctl() -> Any:
    import ctypes  # here: the coordinator never needs it

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not every libc offers prctl: then this guard is off
        return None


def prepare_to_fork() -> None:
    """Look ``prctl`` up before forking, so that each forked child only calls it (:func:`die_with_parent`)."""
    _prctl()


def die_with_parent(expected_parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies; exit now if the parent is already gone.

    Call it in the child right after ``fork``, with the parent's pid taken before the fork (a parent that died in
    between would otherwise go unnoticed: the child has been re-parented already)."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != expected_parent:
        os._exit(0)


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``, and ``pid`` itself (a stopped process dies too, and so does one that
    does not lead its group yet)."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


def guard_workers(pid: int) -> None:
    """Record a live worker process group (``pid`` leads it); installs the SIGTERM handler once, from the main
    thread (a handler can only be installed there; executors made elsewhere rely on their caller's cleanup)."""
    global _installed
    with _lock:
        _live_groups.add(pid)
        if _installed or threading.current_thread() is not threading.main_thread():
            return
        _installed = True
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        with _lock:
            groups = list(_live_groups)
        for group in groups:
            kill_group(group)
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # end the process as SIGTERM always did
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)


def release_workers(pid: int) -> None:
    """Forget a worker process group (it has ended)."""
    with _lock:
        _live_groups.discard(pid)
