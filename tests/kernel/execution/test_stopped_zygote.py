"""A local zygote a Policy stopped (or sent a stop it has not acted on yet) never hangs its worker.

The end-of-Episode check (``check_alive``) blames the Policy when the zygote shows stopped then. These are the other
moments the worker waits for its zygote, with the stop coming when that check could not see it: asking for a child,
and closing the zygote while it was busy. Real zygotes forked from this process; the stop is sent by the test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from evoledger.kernel.execution import EpisodeTask
from evoledger.kernel.execution.episode_runner import EpisodeRunner
from evoledger.kernel.execution.process_guard import process_state
from evoledger.kernel.execution.zygote import Zygote, ZygoteBroken
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.tests.kernel.execution.conftest import toy_counter_template
from evoledger.tests.support.process_tree import wait_until

MakeTasks = Callable[..., list[EpisodeTask]]
_T = TypeVar("_T")


class _SlowToUnpickle:
    """Unpickled (by the zygote, as a template field) it sleeps: a zygote busy when the worker closes it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __reduce__(self) -> tuple[Any, tuple[float]]:
        return time.sleep, (self.seconds,)


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)
    assert wait_until(lambda: process_state(pid) in ("T", "t"), 30.0, every=0.005)


def _within(seconds: float, zygote: Zygote, call: Callable[[], _T]) -> _T:
    """``call()``'s result, or a failure (never a hang) if it is still waiting for ``zygote`` after ``seconds``."""
    results: list[_T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(call())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():  # unstick it before failing
        os.kill(zygote.pid, signal.SIGKILL)
        thread.join(30.0)
        pytest.fail(f"still waiting for the stopped zygote after {seconds:g} s")
    if errors:
        raise errors[0]
    return results[0]


@pytest.fixture
def zygote() -> Iterator[Zygote]:
    made = Zygote.fork(None)
    yield made
    with contextlib.suppress(ProcessLookupError):  # whatever a failed test left: never a stopped zygote behind
        os.kill(made.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        made.close()


def test_asking_a_stopped_zygote_for_a_child_raises_instead_of_waiting(zygote: Zygote) -> None:
    zygote.send_template(*toy_counter_template())
    zygote.discard(zygote.take_child())  # a working zygote first
    _stop(zygote.pid)
    with pytest.raises(ZygoteBroken, match=rf"the zygote \(pid {zygote.pid}\) was stopped by a signal"):
        _within(15.0, zygote, zygote.take_child)


def test_a_zygote_stopped_while_it_is_being_closed_is_killed_not_waited_for(zygote: Zygote) -> None:
    _, action_space, metadata, parameters = toy_counter_template()
    zygote.send_template(_SlowToUnpickle(20.0), action_space, metadata, parameters)  # busy for 20 s from now
    assert wait_until(lambda: process_state(zygote.pid) == "S", 30.0, every=0.005)  # asleep in its unpickling
    # close() finds the zygote neither stopped nor signalled, and waits for it to exit; 0.3 s in, it never will.
    threading.Timer(0.3, os.kill, (zygote.pid, signal.SIGSTOP)).start()
    began = time.monotonic()
    _within(15.0, zygote, zygote.close)
    assert time.monotonic() - began < 15.0
    assert process_state(zygote.pid) is None  # killed and reaped


def test_an_episode_whose_zygote_was_stopped_before_it_began_is_a_refunded_infra_fault(
    zygote: Zygote, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    """Stopped between Episodes (after the last one's check): the next Episode ends at once as ``infra_fault``,
    naming the stop, and the runner retires (its worker is replaced), instead of waiting for a child forever."""
    benchmark = resolve_benchmark(BenchmarkRef(name="toy-counter"))
    zygote.send_template(*toy_counter_template())
    runner = EpisodeRunner(benchmark, zygote)
    # Quiet: a Policy forked from this process (not from a worker) has pytest's captured stdout, which it cannot use.
    (task,) = make_tasks(programs["fast_zero"])
    first = runner.run(task)
    assert first.status == "ok", (first.failure_message, first.traceback)
    runner.prefork()
    while zygote.child_coming:  # the prefork's child, forked already, is not this test's point: drop it
        zygote.discard(zygote.take_child())
    _stop(zygote.pid)
    outcome = _within(15.0, zygote, lambda: runner.run(task))
    assert outcome.status == "infra_fault"
    assert f"the zygote (pid {zygote.pid}) was stopped by a signal before this Episode's Policy started" in str(
        outcome.failure_message
    )
    assert outcome.steps == 0
    assert runner.retired
