"""A lost Ray node is an infra fault, retried, never the Policy's: a real two-node cluster on this machine (no mock),
whose second node loses every process (``SIGKILL``, as a machine that dies) while Episodes run on it. The Episodes
it held run again on the head; every Episode ends ``ok`` with the local backend's trajectory, although the lost
actor's replacement can never start (the cluster has no free CPU left for it): an Episode sent to that replacement
would wait for its deadline and be lost a second time, which ``max_attempts=2`` makes its final infra fault. With no
CPU on the head, no actor is left at all: the Episodes waiting end as infra faults after ``startup_timeout``. Under
``-m catalog``: two Ray nodes cost tens of seconds to start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
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


class _NodeLoser(threading.Thread):
    """Loses the node of ``ray start`` process ``node`` (every process of it at once, ``SIGKILL``) as soon as an
    Episode's Policy runs there: ``on_it`` is then those Episodes, ``tree`` the node's processes."""

    def __init__(self, node: int, marks: Path) -> None:
        super().__init__()
        self.node, self.marks = node, marks
        self.on_it: set[int] = set()
        self.tree: set[int] = set()

    def run(self) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not self.on_it:
            tree = descendants(self.node)
            on_it = {index for pid, index in _runs(self.marks) if pid in tree}
            if on_it:
                self.on_it, self.tree = on_it, tree | {self.node}
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.node, signal.SIGKILL)
                for pid in tree:  # any that left the node's process group
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="evln-", dir="/tmp"))  # short: Unix socket paths are length-limited
    (made / "marks").mkdir()
    for name, value in RAY_ENV.items():
        monkeypatch.setenv(name, value)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def _tasks(root: Path, make_tasks: MakeTasks, count: int) -> list[EpisodeTask]:
    program = write_program(root, "marked_slow", MARKED_SLOW.format(marks=str(root / "marks")))
    limits = PolicyLimits(
        act_timeout_seconds=5.0, make_policy_timeout_seconds=30.0, episode_policy_seconds=30.0, memory_bytes=1024**3
    )
    return make_tasks(program, count, limits=limits)


def test_a_lost_node_is_an_infra_fault_retried_on_the_nodes_left(
    root: Path, make_tasks: MakeTasks, counter: LocalExecutor
) -> None:
    tasks = _tasks(root, make_tasks, 10)  # the head stays busy: retries cannot wait for it
    with ray_nodes(root, second_prefix=[]) as (address, _, nodes):
        loser = _NodeLoser(nodes[1].pid, root / "marks")
        ref = BenchmarkRef(name="toy-counter")
        with RayExecutor(ref, workers=2, isolation="local", address=address, max_attempts=2) as ray:
            assert set(ray.actor_pids) & descendants(loser.node)  # one actor on each node
            loser.start()
            try:
                on_ray = [_facts(o) for o in ray.run(tasks)]
            finally:
                loser.join()
            again = [_facts(o) for o in ray.run(tasks[:2])]  # the executor goes on with the node left
    assert loser.on_it, "no Episode ever ran on the second node"
    assert wait_until(lambda: not alive(loser.tree), 60), "the lost node's processes did not all end"
    runs = _runs(root / "marks")
    for index in loser.on_it:  # each Episode on the lost node ran again, on the head
        assert sum(1 for _, i in runs if i == index) >= 2, (index, sorted(runs))
    locally = [_facts(o) for o in counter.run(tasks)]
    assert on_ray == locally  # every Episode ok, each trajectory the local backend's
    assert [f[1] for f in on_ray] == ["ok"] * 10
    assert again == locally[:2]


def test_episodes_left_without_any_actor_end_as_infra_faults_once_none_can_start(
    root: Path, make_tasks: MakeTasks
) -> None:
    """The head has no CPU: the one actor runs on the second node, and once that node is lost no actor can start
    anywhere. After ``startup_timeout`` the Episodes still waiting end as infra faults (the Host refunds them)."""
    tasks = _tasks(root, make_tasks, 4)
    with ray_nodes(root, head_args=["--num-cpus=0"], second_prefix=[]) as (address, _, nodes):
        loser = _NodeLoser(nodes[1].pid, root / "marks")
        ref = BenchmarkRef(name="toy-counter")
        with RayExecutor(ref, workers=1, isolation="local", address=address, startup_timeout=60) as ray:
            assert set(ray.actor_pids) <= descendants(loser.node)
            loser.start()
            try:
                outcomes = list(ray.run(tasks))
            finally:
                loser.join()
    assert loser.on_it, "no Episode ever ran on the second node"
    lost = [o for o in outcomes if o.status != "ok"]
    assert lost, [o.status for o in outcomes]
    assert [o.index for o in outcomes] == [t.episode.index for t in tasks]
    for outcome in lost:
        assert outcome.status == "infra_fault"
        assert "no Ray actor was left to run it" in (outcome.failure_message or ""), outcome.failure_message
