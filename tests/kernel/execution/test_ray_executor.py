"""RayExecutor on a real local Ray cluster (no mock): the same trajectories as LocalExecutor, a killed Ray worker
retried as an infra fault, start-up errors in the user's words, and ``evaluate --backend ray`` through the real CLI.

One Ray cluster (3 logical CPUs, no dashboard) and one two-actor executor serve the whole module: starting Ray costs
seconds. Skipped when Ray is not installed (the dev extra installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits, RayExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import ConfigError
from evoledger.tests.support.process_tree import wait_until

from .conftest import write_program

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'evoledger[ray]')")

MakeTasks = Callable[..., list[EpisodeTask]]

SLOW_FIRST_RUN = """
import os
import time

MARK = {mark!r}


class _Policy:
    def __init__(self, slow):
        self.slow = slow

    def act(self, observation):
        if self.slow:
            time.sleep(0.5)
        return 0


def make_policy(context):
    slow = not os.path.exists(MARK)  # only the first run of the Episode is slow: the one whose worker is killed
    with open(MARK, "a", encoding="utf-8") as mark:
        mark.write("run\\n")
    return _Policy(slow)
"""


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """A private local Ray instance for this module, stopped (and its files removed) at the end."""
    temp = tempfile.mkdtemp(prefix="evoledger-raytest-", dir="/tmp")  # Ray's socket paths must stay short
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, _temp_dir=temp, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_executor(ray_cluster: None) -> Iterator[RayExecutor]:
    """Two Episode actors on ``toy-counter``, shared by the module (the cluster was started by the fixture)."""
    with RayExecutor(BenchmarkRef(name="toy-counter"), workers=2) as executor:
        yield executor


def _facts(outcome: EpisodeOutcome) -> tuple[Any, ...]:
    return (
        outcome.split,
        outcome.index,
        outcome.status,
        outcome.episode_return,
        outcome.steps,
        outcome.failure_message,
        outcome.policy_log,
        digest_of(outcome.trajectory or b""),
    )


def test_trajectories_are_byte_identical_to_the_local_executor(
    ray_executor: RayExecutor, counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    tasks = make_tasks(programs["binary_search"], 4) + make_tasks(programs["raise_in_act"], 1, seed=1)
    tasks += make_tasks(programs["chatty"], 2, seed=2)  # three Programs shipped by digest, two actors, in task order
    on_ray = [_facts(o) for o in ray_executor.run(tasks)]
    locally = [_facts(o) for o in counter.run(tasks)]
    assert on_ray == locally
    assert [f[2] for f in on_ray] == ["ok"] * 4 + ["exception", "ok", "ok"]
    assert all(f[7] != digest_of(b"") for f in on_ray)  # every trajectory was recorded and compared


def test_a_killed_ray_worker_is_an_infra_fault_retried_never_the_policys(
    ray_executor: RayExecutor, counter: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    mark = tmp_path / "runs.txt"
    program = write_program(tmp_path, "slow_first", SLOW_FIRST_RUN.format(mark=str(mark)))
    limits = PolicyLimits(act_timeout_seconds=10.0, make_policy_timeout_seconds=30.0, memory_bytes=1024**3)
    tasks = make_tasks(program, 1, limits=limits)
    pids = ray_executor.actor_pids
    killed: list[int] = []

    def kill_the_actor_mid_episode() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not mark.exists():
            time.sleep(0.01)
        if mark.exists():  # make_policy ran: the Episode is under way on slot 0 (the first idle actor)
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    killer = threading.Thread(target=kill_the_actor_mid_episode)
    killer.start()
    try:
        (outcome,) = ray_executor.run(tasks)
    finally:
        killer.join()
    assert killed == [pids[0]]
    assert outcome.status == "ok", outcome.failure_message  # retried on a new actor, never the Policy's failure
    assert mark.read_text(encoding="utf-8").count("run") == 2  # the killed run and the retry
    (local,) = counter.run(tasks)  # the mark exists: this run is fast, and must be the same Episode
    assert _facts(outcome) == _facts(local)
    assert ray_executor.actor_pids[0] != pids[0]  # slot 0 has a new actor


def test_a_run_abandoned_midway_leaves_the_actors_free_for_the_next(
    ray_executor: RayExecutor, counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    tasks = make_tasks(programs["binary_search"], 6, seed=3)
    abandoned = ray_executor.run(tasks)
    assert isinstance(abandoned, Generator)
    next(abandoned)  # Episodes are still queued on both actors
    abandoned.close()
    finished: list[list[tuple[Any, ...]]] = []
    later = threading.Thread(target=lambda: finished.append([_facts(o) for o in ray_executor.run(tasks[:3])]))
    later.start()
    later.join(timeout=300)  # a slot left marked busy would wait forever
    assert finished == [[_facts(o) for o in counter.run(tasks[:3])]]


def test_a_benchmark_a_node_cannot_build_is_a_config_error(ray_cluster: None) -> None:
    with pytest.raises(ConfigError, match="no-such-benchmark"):
        RayExecutor(BenchmarkRef(name="no-such-benchmark"), startup_timeout=120)


def test_evaluate_backend_ray_through_the_cli_matches_local_and_leaves_nothing(
    counter: LocalExecutor, programs: dict[str, Path], tmp_path: Path
) -> None:
    before = set(Path("/tmp").glob("evoledger-ray-*"))
    argv = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()", "evaluate"]
    argv += [str(programs["binary_search"]), "-b", "toy-counter", "-n", "3", "-w", "2", "--isolation", "local"]
    argv += ["--backend", "ray", "--json"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # stdout is the JSON document alone: Ray logged nothing there
    config = EvaluationConfig(episodes=3, workers=2, isolation="local")
    local = evaluate(programs["binary_search"], "toy-counter", config=config, executor=counter)
    assert [e["trajectory_digest"] for e in result["episodes"]] == [e.trajectory_digest for e in local.episodes]
    # Its Ray instance's files were removed. Another test file running beside this one may hold such a folder for a
    # few seconds (the reaper's tests make real ones): every folder that appeared meanwhile must be gone soon.
    appeared = set(Path("/tmp").glob("evoledger-ray-*")) - before
    assert wait_until(lambda: not any(folder.exists() for folder in appeared), 60.0, every=0.2), appeared
