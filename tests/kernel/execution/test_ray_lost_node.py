"""A lost Ray node is an infra fault, retried, never the Policy's: a real two-node cluster on this machine (no mock),
whose second node loses every process (``SIGKILL``, as a machine that dies) while Episodes run on it. The Episodes
it held run again on the head; every Episode ends ``ok`` with the local backend's trajectory, although the lost
actor's replacement can never start (the cluster has no free CPU left for it): an Episode sent to that replacement
would wait for its deadline and be lost a second time, which ``max_attempts=2`` makes its final infra fault. Under
``-m catalog``: two Ray nodes cost tens of seconds to start."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits, RayExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.canonical import digest_of
from evoledger.tests.support.process_tree import alive, descendants, wait_until
from evoledger.tests.support.ray_nodes import RAY_ENV, ray_nodes

from .conftest import write_program

pytest.importorskip("ray", reason="Ray is not installed (pip install 'evoledger[ray]')")
pytestmark = pytest.mark.catalog

MakeTasks = Callable[..., list[EpisodeTask]]

MARKED_SLOW = """
import os
import time

MARKS = {marks!r}


class _Policy:
    def act(self, observation):
        time.sleep(0.3)
        return 0


def make_policy(context):
    with open(os.path.join(MARKS, f"{{os.getpid()}}-{{context.policy_seed}}"), "w", encoding="utf-8"):
        pass  # one file per run of an Episode: the Policy process and the Episode (its Policy seed = its index)
    return _Policy()
"""


def _facts(outcome: EpisodeOutcome) -> tuple[Any, ...]:
    return (outcome.index, outcome.status, outcome.episode_return, outcome.steps, digest_of(outcome.trajectory or b""))


def _runs(marks: Path) -> list[tuple[int, int]]:
    """(Policy process, Episode index) of every run of an Episode so far."""
    return [(int(pid), int(index)) for pid, _, index in (m.name.partition("-") for m in marks.iterdir())]


def test_a_lost_node_is_an_infra_fault_retried_on_the_nodes_left(
    make_tasks: MakeTasks, counter: LocalExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="evln-", dir="/tmp"))  # short: Unix socket paths are length-limited
    try:
        marks = root / "marks"
        marks.mkdir()
        program = write_program(root, "marked_slow", MARKED_SLOW.format(marks=str(marks)))
        limits = PolicyLimits(
            act_timeout_seconds=5.0, make_policy_timeout_seconds=30.0, episode_policy_seconds=30.0, memory_bytes=1024**3
        )
        tasks = make_tasks(program, 10, limits=limits)  # the head stays busy: retries cannot wait for it
        for name, value in RAY_ENV.items():
            monkeypatch.setenv(name, value)
        lost: dict[str, Any] = {}
        with ray_nodes(root, second_prefix=[]) as (address, _, nodes):
            second = nodes[1].pid

            def lose_the_second_node_mid_episode() -> None:
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline and "on_it" not in lost:
                    tree = descendants(second)
                    on_it = {index for pid, index in _runs(marks) if pid in tree}
                    if on_it:  # an Episode's Policy runs on the second node: lose the node, every process at once
                        lost["on_it"], lost["tree"] = on_it, tree | {second}
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(second, signal.SIGKILL)
                        for pid in tree:  # any that left the node's process group
                            with contextlib.suppress(ProcessLookupError):
                                os.kill(pid, signal.SIGKILL)
                    time.sleep(0.05)

            ref = BenchmarkRef(name="toy-counter")
            with RayExecutor(ref, workers=2, isolation="local", address=address, max_attempts=2) as ray:
                assert ray.actor_pids[1] in descendants(second) or ray.actor_pids[0] in descendants(second)
                killer = threading.Thread(target=lose_the_second_node_mid_episode)
                killer.start()
                try:
                    on_ray = [_facts(o) for o in ray.run(tasks)]
                finally:
                    killer.join()
                again = [_facts(o) for o in ray.run(tasks[:2])]  # the executor goes on with the node left
        assert lost.get("on_it"), "no Episode ever ran on the second node"
        assert wait_until(lambda: not alive(lost["tree"]), 60), "the lost node's processes did not all end"
        runs = _runs(marks)
        for index in lost["on_it"]:  # each Episode on the lost node ran again, on the head
            assert sum(1 for _, i in runs if i == index) >= 2, (index, sorted(runs))
        locally = [_facts(o) for o in counter.run(tasks)]
        assert on_ray == locally  # every Episode ok, each trajectory the local backend's
        assert [f[1] for f in on_ray] == ["ok"] * 10
        assert again == locally[:2]
    finally:
        shutil.rmtree(root, ignore_errors=True)
