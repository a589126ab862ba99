"""A killed Policy child is freed on the zygote's spare CPU, not on the CPU where the worker runs its next Episode."""

from __future__ import annotations

import os

import pytest
from evoledger.kernel.execution.zygote import Zygote
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

_CPUS = sorted(os.sched_getaffinity(0))


def _template() -> tuple[object, object, object, object]:
    benchmark = resolve_benchmark(BenchmarkRef(name="toy-counter"))
    spec = benchmark.spec
    return benchmark.observation_space, benchmark.action_space, spec.metadata, spec.environment_parameters


@pytest.mark.skipif(len(_CPUS) < 2, reason="needs two CPUs")
def test_a_killed_child_is_moved_to_the_zygotes_cpus_before_it_dies() -> None:
    worker_cpu, spare_cpu = _CPUS[:2]
    zygote = Zygote.fork(worker_cpu, cpus={worker_cpu, spare_cpu})
    try:
        zygote.send_template(*_template())
        child = zygote.take_child()
        os.sched_setaffinity(child.pid, {worker_cpu})  # where its start message pins it
        zygote.kill_child(child.pid)
        # Not reaped until released: the dead child's affinity is still there to read.
        assert os.sched_getaffinity(child.pid) == {worker_cpu, spare_cpu}
        child.channel.close()
        os.close(child.log_fd)
        zygote.release(child.pid)
    finally:
        zygote.close()


def test_without_spare_cpus_a_killed_child_stays_where_it_ran() -> None:
    worker_cpu = _CPUS[0]
    zygote = Zygote.fork(worker_cpu)
    try:
        zygote.send_template(*_template())
        child = zygote.take_child()
        os.sched_setaffinity(child.pid, {worker_cpu})
        zygote.kill_child(child.pid)
        assert os.sched_getaffinity(child.pid) == {worker_cpu}
        child.channel.close()
        os.close(child.log_fd)
        zygote.release(child.pid)
    finally:
        zygote.close()
