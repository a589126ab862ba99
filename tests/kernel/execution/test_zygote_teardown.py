"""Where Policy children live: forked and set up on the zygote's spare CPU, waiting for their Episode on the worker's,
freed (once killed) on the spare CPU again; and their output pipe is large."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from evoledger.kernel.execution import EpisodeTask, LocalExecutor
from evoledger.kernel.execution.zygote import Zygote
from evoledger.kernel.registry import BenchmarkRef
from evoledger.tests.kernel.execution.conftest import toy_counter_template
from evoledger.tests.support.process_tree import wait_until

MakeTasks = Callable[..., list[EpisodeTask]]

_CPUS = sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(_CPUS) < 2, reason="needs two CPUs")
def test_a_killed_child_is_moved_to_the_zygotes_cpus_before_it_dies() -> None:
    worker_cpu, spare_cpu = _CPUS[:2]
    zygote = Zygote.fork(worker_cpu, cpus={worker_cpu, spare_cpu})
    try:
        zygote.send_template(*toy_counter_template())
        child = zygote.take_child()
        try:
            # Once set up, the child joins the worker's CPU by itself: wait for that, or its own move could undo the
            # kill's (seen under load, with the child still setting up when it was killed).
            assert wait_until(lambda: os.sched_getaffinity(child.pid) == {worker_cpu}, 60.0, every=0.01)
            zygote.kill_child(child.pid)
            # Not reaped until released: the dead child's affinity is still there to read.
            assert os.sched_getaffinity(child.pid) == {worker_cpu, spare_cpu}
        finally:  # even when an assertion fails: a leaked socket would warn in whichever test the collector runs in
            zygote.discard(child)
    finally:
        zygote.close()


def test_without_spare_cpus_a_killed_child_stays_where_it_ran() -> None:
    worker_cpu = _CPUS[0]
    zygote = Zygote.fork(worker_cpu)
    try:
        zygote.send_template(*toy_counter_template())
        child = zygote.take_child()
        os.sched_setaffinity(child.pid, {worker_cpu})
        zygote.kill_child(child.pid)
        assert os.sched_getaffinity(child.pid) == {worker_cpu}
        child.close_fds()
        zygote.release(child.pid)
    finally:
        zygote.close()


@pytest.mark.skipif(len(_CPUS) < 2, reason="needs two CPUs")
def test_a_child_sets_up_on_a_spare_cpu_and_waits_for_its_episode_on_the_workers() -> None:
    worker_cpu, spare_cpu = _CPUS[:2]
    zygote = Zygote.fork(worker_cpu, cpus={spare_cpu})
    try:
        zygote.send_template(*toy_counter_template())
        child = zygote.take_child()
        assert os.sched_getaffinity(zygote.pid) == {spare_cpu}
        assert wait_until(lambda: os.sched_getaffinity(child.pid) == {worker_cpu}, 30, every=0.01)
        zygote.kill_child(child.pid)
        assert os.sched_getaffinity(child.pid) == {spare_cpu}  # freed off the worker's CPU
        child.close_fds()
        zygote.release(child.pid)
    finally:
        zygote.close()


@pytest.mark.skipif(len(_CPUS) < 2, reason="needs two CPUs")
def test_a_local_workers_zygote_keeps_off_the_workers_cpu(programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    with LocalExecutor(BenchmarkRef(name="toy-counter"), workers=1) as executor:
        assert [o.status for o in executor.run(make_tasks(programs["fast_zero"]))] == ["ok"]
        (worker,) = executor.worker_pids
        (worker_cpu,) = os.sched_getaffinity(worker)
        (zygote,) = (int(pid) for pid in Path(f"/proc/{worker}/task/{worker}/children").read_text().split())
        assert os.sched_getaffinity(zygote) == set(_CPUS) - {worker_cpu}


def test_a_childs_output_pipe_holds_a_mebibyte() -> None:
    if int(Path("/proc/sys/fs/pipe-max-size").read_text()) < 1 << 20:
        pytest.skip("pipes here hold less than 1 MiB")
    zygote = Zygote.fork(_CPUS[0])
    try:
        zygote.send_template(*toy_counter_template())
        child = zygote.take_child()
        assert fcntl.fcntl(child.log_fd, fcntl.F_GETPIPE_SZ) == 1 << 20
        zygote.discard(child)
    finally:
        zygote.close()
