"""``evoledger sweep --backend ray``: whole Runs placed on a real local Ray cluster (no mock), through the real CLI.

Each cell's ``evoledger run`` is started by a Ray task: its parent process is a Ray worker, the sweep records the node
(``sweep-cell-placed``), a SIGTERMed sweep cancels the tasks (the Runs stop, resumable) and running it again resumes
them on Ray. The Agent waits for a release file before it submits, so the kill always finds both Runs live. Every wait
has a generous deadline; nothing asserts a duration. Plus the storage check, with no Ray needed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from evoledger.kernel.sweep.ray_placement import (
    EXIT_SUFFIX,
    PROBE_NAME,
    SharedStorageError,
    check_storage,
    host_cell,
    storage_error,
)
from evoledger.kernel.sweep.record import read_sweep
from evoledger.ledger.events import SweepCellPlaced
from evoledger.ledger.store import Ledger
from evoledger.tests.support.process_tree import alive, cmdline, descendants, processes_naming, wait_until
from evoledger.tests.support.ray_nodes import ray_nodes
from evoledger.tests.support.sweep_cells import RELEASED_AGENT, count_events

_CLI = [sys.executable, "-m", "evoledger"]
_NEEDS_RAY = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="needs Ray: pip install 'evoledger[ray]'"
)
CELLS = ("toy-counter--scripted--seed-0", "toy-counter--scripted--seed-1")


def _sweep_file(root: Path, seeds: tuple[int, ...] = (0, 1)) -> None:
    (root / "agent.py").write_text(RELEASED_AGENT)
    agent = "command:" + shlex.join([sys.executable, str(root / "agent.py"), str(root / "release")])
    (root / "study.toml").write_text(
        f'[sweep]\nname = "placed"\nseeds = {list(seeds)}\n'
        "[run]\nepisode_budget = 2\nvalidation = { episodes = 1 }\nassessment = { episodes = 1 }\n"
        'isolation = "local"\nagent_isolation = "local"\n'
        '[[benchmark]]\nname = "toy/counter"\n'
        f'[[agent]]\nname = {json.dumps(agent)}\nlabel = "scripted"\n'
    )


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def _placed(out: Path) -> list[SweepCellPlaced]:
    with Ledger.open(out) as ledger:
        return [r.event for r in ledger.events(kinds=["sweep-cell-placed"])]  # type: ignore[misc]


@dataclass(frozen=True)
class Placed:
    root: Path
    first: subprocess.CompletedProcess[str]
    second: subprocess.CompletedProcess[str]
    parents: dict[str, tuple[str, str]]
    """Each cell's Run process: its parent's and grandparent's command lines, seen while the Run was live."""
    placed_live: list[SweepCellPlaced]
    run_pids: dict[str, int]


@pytest.fixture(scope="module")
def placed() -> Iterator[Placed]:
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are length-limited
    _sweep_file(root)
    out = root / "out"
    command = [*_CLI, "sweep", "study.toml", "--out", "out", "--parallel", "2", "--backend", "ray"]
    process = subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:

        def live() -> int:
            return sum(1 for cell in CELLS if count_events(out / "runs" / cell, "agent-started"))

        if not wait_until(lambda: live() == 2 or process.poll() is not None, 300, every=0.2):
            raise AssertionError("the placed Runs never started")
        assert process.poll() is None, process.communicate()
        assert wait_until(lambda: len(_placed(out)) == 2, 60, every=0.2)
        run_pids: dict[str, int] = {}
        parents: dict[str, tuple[str, str]] = {}
        for cell in CELLS:
            runs = [p for p in processes_naming(str(out / "runs" / cell)) if " run toy/counter " in cmdline(p)]
            (pid,) = [p for p in runs if "run_shepherd.py" not in cmdline(p)]  # the shepherd's holds the Run's
            run_pids[cell] = pid
            parents[cell] = (cmdline(_parent(pid)), cmdline(_parent(_parent(pid))))
        placed_live = _placed(out)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    first = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert wait_until(lambda: not processes_naming(str(out / "runs")), 60, every=0.2)  # no Run outlives the sweep
    (root / "release").touch()
    second = subprocess.run([*command, "--json"], cwd=root, capture_output=True, text=True, timeout=600)
    yield Placed(root, first, second, parents, placed_live, run_pids)
    shutil.rmtree(root, ignore_errors=True)


@_NEEDS_RAY
@pytest.mark.catalog
def test_each_run_is_started_by_a_ray_worker_and_its_node_recorded(placed: Placed) -> None:
    for cell in CELLS:
        shepherd, worker = placed.parents[cell]
        assert "run_shepherd.py" in shepherd, shepherd  # which a Ray worker started: its title is ray::<task>
        assert worker.startswith("ray::"), worker
    by_cell = {event.cell: event for event in placed.placed_live}
    assert sorted(by_cell) == list(CELLS)
    for cell, event in by_cell.items():
        assert (event.attempt, event.pid, event.hostname) == (1, placed.run_pids[cell], os.uname().nodename)
        assert len(event.node_id) == 56


@_NEEDS_RAY
@pytest.mark.catalog
def test_sigterm_stops_the_placed_runs_and_the_second_sweep_resumes_them_on_ray(placed: Placed) -> None:
    assert placed.first.returncode == -signal.SIGTERM, placed.first.stderr[-3000:]
    assert "continue it with: evoledger sweep study.toml --out out" in placed.first.stderr
    assert placed.second.returncode == 0, placed.second.stderr[-3000:]
    data = json.loads(placed.second.stdout)
    assert data["counts"] == {"finished": 2}
    assert all(c["node"] == os.uname().nodename for c in data["cells"])
    out = placed.root / "out"
    state = read_sweep(out)
    with Ledger.open(out) as ledger:
        ends = [r.event for r in ledger.events(kinds=["sweep-cell-ended"])]
    for cell in CELLS:
        history = state.cells[cell]
        assert [e.outcome for e in ends if e.cell == cell] == ["interrupted", "finished"]  # type: ignore[attr-defined]
        # the stopped Run's exit code, as a local Run's is recorded (its cancelled Ray task returned none)
        assert [e.exit_code for e in ends if e.cell == cell] == [-signal.SIGTERM, 0]  # type: ignore[attr-defined]
        assert (history.attempts, history.last_mode) == (2, "resume")
        assert history.placed is not None
        assert history.placed.attempt == 2
        with Ledger.open(out / "runs" / cell) as run:
            assert history.last_end is not None
            assert history.last_end.run_head_hash == run.head().hash
    assert not (out / PROBE_NAME).exists()


@_NEEDS_RAY
@pytest.mark.catalog
def test_a_sigkilled_placed_sweep_leaves_no_run_running_and_resumes() -> None:
    """The sweep ends without stopping anything: Ray ends its workers, and the Run gets SIGTERM from the kernel when
    Ray kills its shepherd. The reaper of the sweep's private Ray instance ends the rest of it (Ray's agents outlived
    it by a minute) and removes its folder."""
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    try:
        _sweep_file(root, seeds=(0,))
        out, cell = root / "out", CELLS[0]
        command = [*_CLI, "sweep", "study.toml", "--out", "out", "--backend", "ray"]
        process = subprocess.Popen(command, cwd=root, start_new_session=True, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: count_events(out / "runs" / cell, "agent-started") > 0, 300, every=0.2)
            assert processes_naming(str(out / "runs" / cell))
            ray_tree = {pid for pid in descendants(process.pid) if str(root) not in cmdline(pid)}  # not the Run
            (folder,) = {found for pid in ray_tree for found in re.findall(r"/tmp/evoledger-ray-[^/ ]+", cmdline(pid))}
            process.kill()
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
        assert wait_until(lambda: not processes_naming(str(out / "runs")), 120, every=0.2)
        # the Run stopped as on SIGTERM, its Agent too (SIGKILLed by Ray with its worker, it had left it running)
        assert wait_until(lambda: not processes_naming(str(root / "agent.py")), 60, every=0.2)
        assert "interrupted: the Run in" in (out / "logs" / f"{cell}.log").read_text()
        assert wait_until(lambda: not alive(ray_tree), 30, every=0.2), [cmdline(pid) for pid in alive(ray_tree)]
        assert wait_until(lambda: not Path(folder).exists(), 30, every=0.2)
        (root / "release").touch()
        again = subprocess.run([*command, "--json"], cwd=root, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        assert json.loads(again.stdout)["counts"] == {"finished": 1}
        assert read_sweep(out).cells[cell].last_mode == "resume"  # the Run was kept, not started over
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- the storage check: a node that cannot see or write the sweep's folder is named, with the fix -------------------


@_NEEDS_RAY
@pytest.mark.catalog
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a node with its own mounts")
def test_a_node_that_does_not_see_the_sweeps_folder_is_refused_before_any_run() -> None:
    """A real two-node cluster on this machine: the second node runs in a mount namespace where the sweep's folder is
    an empty tmpfs, as on a machine without the shared file system. The sweep names that node and the fix, exits 2
    and starts no Run."""
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    try:
        _sweep_file(root, seeds=(0,))
        (root / "shared").mkdir()
        hidden = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(root / "shared"), "--die-with-parent"]
        with ray_nodes(root, second_prefix=hidden) as (address, env, _):
            done = subprocess.run(
                [*_CLI, "sweep", "study.toml", "--out", "shared/out", "--backend", "ray", "--ray-address", address],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=600,
                env=env,
            )
        assert done.returncode == 2, done.stderr[-3000:]
        out = root / "shared" / "out"
        assert f"--out {out} is not storage every Ray node can write at the same path" in done.stderr
        assert "cannot read the sweep's probe file" in done.stderr
        assert "NFS" in done.stderr
        assert not (out / "runs").exists()  # no Run started
        assert read_sweep(out).cells[CELLS[0]].attempts == 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_cancelled_cell_task_stops_its_run_and_leaves_its_exit_code_for_the_sweep(tmp_path: Path) -> None:
    """Ray cancels a task by raising KeyboardInterrupt in it, and the task then returns Ray's cancellation alone: the
    task stops the Run and writes its exit code next to its log for the sweep instead."""
    (tmp_path / PROBE_NAME).write_text("t0k3n")
    logs = tmp_path / "logs"
    logs.mkdir()
    exit_file = logs / f"c.log{EXIT_SUFFIX}"
    exit_file.write_text("0")  # an earlier attempt's: removed when the Run starts
    argv = [sys.executable, "-c", "import time; time.sleep(120)"]
    task = host_cell(argv, str(logs / "c.log"), str(tmp_path), str(tmp_path / PROBE_NAME), "t0k3n", 30)
    pid = next(task)["pid"]
    assert not exit_file.exists()
    with pytest.raises(KeyboardInterrupt):
        task.throw(KeyboardInterrupt)  # as Ray raises it in the cancelled task
    assert not alive({pid})
    assert exit_file.read_text() == str(-signal.SIGTERM)  # stopped as evoledger run stops on SIGTERM


STOPS_ON_SIGTERM = """
import signal, sys, time
def stop(signum, frame):
    open(sys.argv[1], "w").write("stopped cleanly")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(120)
"""


def test_a_cell_task_whose_worker_ray_kills_stops_its_run_cleanly(tmp_path: Path) -> None:
    """Ray SIGKILLs an exiting worker's direct children: that is the shepherd, and the Run gets SIGTERM (it would
    have been SIGKILLed itself, its Agent left running)."""
    (tmp_path / PROBE_NAME).write_text("t0k3n")
    logs = tmp_path / "logs"
    stopped = tmp_path / "stopped"
    argv = [sys.executable, "-c", STOPS_ON_SIGTERM, str(stopped)]
    task = host_cell(argv, str(logs / "c.log"), str(tmp_path), str(tmp_path / PROBE_NAME), "t0k3n", 30)
    pid = next(task)["pid"]
    try:
        assert cmdline(pid).endswith(str(stopped) + " ")  # the Run's own process id is reported
        assert wait_until(lambda: "ready" in (logs / "c.log").read_text(), 60)
        os.kill(_parent(pid), signal.SIGKILL)  # the shepherd, as Ray kills it
        assert wait_until(lambda: not alive({pid}), 60)
        assert stopped.read_text() == "stopped cleanly"
        assert next(task) == {"exit_code": -signal.SIGKILL}  # the task's worker is gone in truth: nobody reads it
    finally:
        if alive({pid}):
            os.kill(pid, signal.SIGKILL)


def test_the_storage_check_names_what_a_node_cannot_do(tmp_path: Path) -> None:
    probe = tmp_path / PROBE_NAME
    logs = tmp_path / "logs"
    assert "cannot read the sweep's probe file" in check_storage(str(probe), "t0k3n", str(logs))["problem"]
    probe.write_text("another")
    assert "not the same storage" in check_storage(str(probe), "t0k3n", str(logs))["problem"]
    probe.write_text("t0k3n")
    seen = check_storage(str(probe), "t0k3n", str(logs))
    assert "problem" not in seen
    assert seen["hostname"] == os.uname().nodename
    assert logs.is_dir()
    assert not list(logs.iterdir())
    logs.chmod(0o500)
    try:
        if os.access(logs, os.W_OK):  # root writes anyway
            pytest.skip("this user can write a read-only folder")
        assert "cannot write into" in check_storage(str(probe), "t0k3n", str(logs))["problem"]
    finally:
        logs.chmod(0o700)


def test_the_storage_error_names_the_node_and_the_fix(tmp_path: Path) -> None:
    error = storage_error(tmp_path, [{"hostname": "node-b", "address": "10.0.0.8", "problem": "cannot read X"}])
    assert isinstance(error, SharedStorageError)
    assert error.exit_code == 2
    text = str(error)
    assert f"--out {tmp_path} is not storage every Ray node can write at the same path" in text
    assert "node node-b (10.0.0.8) cannot read X" in text
    assert "NFS" in text
    assert "run the sweep without --backend ray" in text


@_NEEDS_RAY
@pytest.mark.catalog
def test_a_run_needing_more_cpus_than_any_node_has_is_refused_before_any_run(tmp_path: Path) -> None:
    """Ray would keep its task waiting forever: the sweep says so up front, with the fix."""
    (tmp_path / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[run]\nworkers = 64\nisolation = "local"\nagent_isolation = "local"\n'
        '[[benchmark]]\nname = "toy/counter"\n[[agent]]\nname = "baseline"\n'
    )
    done = subprocess.run(
        [*_CLI, "sweep", "s.toml", "--out", "out", "--backend", "ray"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert "cell toy-counter--baseline--seed-0 needs 64 CPUs (its Run's --workers) but the largest node" in done.stderr
    assert "set workers in the sweep file's [run] to at most that" in done.stderr
    assert read_sweep(tmp_path / "out").cells["toy-counter--baseline--seed-0"].attempts == 0
