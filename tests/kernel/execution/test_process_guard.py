"""``broken_state``: whether a Policy child can still serve, told after another process signalled it.

Real processes: a forked child asleep in a socket read (as a Policy child waits for its start). A signal that has not
taken effect yet is made to stay pending by the child blocking it: so the answer is checked in the moment a busy
machine can make long (the child signalled but not yet run since), every time, not by chance.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Iterator

import pytest
from evoledger.kernel.execution.process_guard import broken_state, process_state
from evoledger.tests.support.process_tree import wait_until


def _default_dispositions() -> None:
    """Every signal's default action, as in a Policy child: the test process's handlers (pytest's, Ray's, the
    executor's SIGTERM guard, which kills *its* workers) must not run in the forked copy, nor raise into pytest."""
    for number in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP cannot be caught
            signal.signal(number, signal.SIG_DFL)


def _sleeper(blocking: signal.Signals | None) -> tuple[int, socket.socket]:
    """A child asleep in ``recv`` (killed and reaped by the caller), blocking ``blocking`` if given."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            _default_dispositions()
            ours.close()
            if blocking is not None:
                signal.pthread_sigmask(signal.SIG_BLOCK, {blocking})
            theirs.send(b"r")
            theirs.recv(1)
        finally:  # never back into pytest in the forked copy
            os._exit(0)
    theirs.close()
    assert ours.recv(1) == b"r"
    assert wait_until(lambda: process_state(pid) == "S", 10.0, every=0.001)
    return pid, ours


@pytest.fixture
def sleepers() -> Iterator[list[tuple[int, socket.socket]]]:
    made: list[tuple[int, socket.socket]] = []
    yield made
    for pid, sock in made:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        sock.close()


@pytest.mark.parametrize(
    ("sig", "words"),
    [
        ("SIGTERM", "was sent a signal"),
        ("SIGUSR1", "was sent a signal"),
        ("SIGHUP", "was sent a signal"),
        ("SIGTSTP", "was stopped by a signal"),
        ("SIGTTIN", "was stopped by a signal"),
    ],
)
def test_a_child_with_a_signal_pending_that_would_end_or_stop_it_cannot_serve(
    sleepers: list[tuple[int, socket.socket]], sig: str, words: str
) -> None:
    number = signal.Signals[sig]
    pid, sock = _sleeper(blocking=number)
    sleepers.append((pid, sock))
    assert broken_state(pid) is None  # asleep and unsignalled: it can serve
    os.kill(pid, number)
    assert broken_state(pid) == words  # still asleep, the signal pending
    assert broken_state(pid, asleep_counts=False) is None  # what the zygote's check sees of an asleep process


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_child_ended_by_a_signal_cannot_serve(sleepers: list[tuple[int, socket.socket]], sig: str) -> None:
    pid, sock = _sleeper(blocking=None)
    sleepers.append((pid, sock))
    os.kill(pid, signal.Signals[sig])
    assert wait_until(lambda: process_state(pid) == "Z", 10.0, every=0.001)
    assert broken_state(pid) == "has ended"


@pytest.mark.parametrize("sig", ["SIGCHLD", "SIGWINCH", "SIGURG", "SIGCONT"])
def test_a_signal_whose_default_is_to_do_nothing_leaves_a_child_able_to_serve(
    sleepers: list[tuple[int, socket.socket]], sig: str
) -> None:
    number = signal.Signals[sig]
    pid, sock = _sleeper(blocking=number)  # blocked, so that it stays pending and is looked at
    sleepers.append((pid, sock))
    os.kill(pid, number)
    assert broken_state(pid) is None, sig
