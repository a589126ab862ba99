"""Stopping a stale Agent's process group: only when the recorded pid is still this Run's Agent (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.agents.stale import stop_stale_agent_group

# Unique to this test process: stopping marked processes never reaches a concurrent test run's sleepers.
WORKSPACE = f"/runs/r1-{os.getpid()}-{time.monotonic_ns()}/workspace"
MARKER = f"EVOLEDGER_WORKSPACE={WORKSPACE}"


_SPAWNED: list[subprocess.Popen[bytes]] = []


def _spawn(workspace: str, script: str = "import time; time.sleep(60)") -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "EVOLEDGER_WORKSPACE": workspace}
    process = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True, stdout=subprocess.PIPE)
    _SPAWNED.append(process)
    return process


@pytest.fixture(autouse=True)
def _reap_spawned() -> Iterator[None]:
    """Every process a test spawned is killed, reaped and its pipe closed, whatever the test did."""
    yield
    while _SPAWNED:
        process = _SPAWNED.pop()
        process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def _gone(pid: int) -> bool:
    """No such process, or only a zombie left (its group is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat.rpartition(b")")[2].split()[0] == b"Z"


def _wait_gone(pid: int) -> bool:
    for _ in range(100):
        if _gone(pid):
            return True
        time.sleep(0.02)
    return False


pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs procfs")


def test_the_agent_holding_the_recorded_pid_is_stopped() -> None:
    agent = _spawn(WORKSPACE)
    try:
        assert stop_stale_agent_group(agent.pid, MARKER) == "stopped"
        assert agent.wait(timeout=10) == -9
    finally:
        agent.kill()


def test_a_reused_pid_is_left_alone() -> None:
    stranger = _spawn(f"{WORKSPACE}-another")
    try:
        assert stop_stale_agent_group(stranger.pid, MARKER) == "not_ours"
        time.sleep(0.1)
        assert stranger.poll() is None  # still running
    finally:
        stranger.kill()
        stranger.wait()


def test_children_left_by_a_dead_agent_are_stopped() -> None:
    """The leader exited; what is left of its group can only be the Agent's (Linux does not reuse the pid)."""
    leader = _spawn(
        WORKSPACE,
        "import subprocess, sys; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        "print(c.pid, flush=True)",
    )
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    leader.wait(timeout=10)  # reaped: /proc has no entry for the leader now
    try:
        assert not _gone(child)
        assert stop_stale_agent_group(leader.pid, MARKER) == "stopped"
        assert _wait_gone(child)
    finally:
        if not _gone(child):
            os.kill(child, 9)


def test_no_such_group_is_fine() -> None:
    done = _spawn("/runs/r1/workspace", "pass")
    done.wait(timeout=10)
    assert stop_stale_agent_group(done.pid, MARKER) == "stopped"  # nothing left to stop; no error


def test_without_procfs_the_group_is_stopped(tmp_path: Path) -> None:
    agent = _spawn(f"{WORKSPACE}-another")
    try:
        assert stop_stale_agent_group(agent.pid, MARKER, proc=tmp_path) == "stopped"
        assert agent.wait(timeout=10) == -9
    finally:
        agent.kill()


def test_an_agent_that_relaunched_itself_with_setsid_is_stopped() -> None:
    """The recorded leader is gone; the Agent lives on in a new session (not in group ``pid``): found by its marker."""
    leader = _spawn(
        WORKSPACE,
        "import subprocess, sys; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " start_new_session=True); print(c.pid, flush=True)",
    )
    assert leader.stdout is not None
    relaunched = int(leader.stdout.readline())
    leader.wait(timeout=10)
    try:
        assert not _gone(relaunched)
        assert os.getpgid(relaunched) != leader.pid
        assert stop_stale_agent_group(leader.pid, MARKER) == "stopped"
        assert _wait_gone(relaunched)
    finally:
        if not _gone(relaunched):
            os.kill(relaunched, 9)


def test_marked_processes_are_stopped_even_when_the_recorded_pid_was_reused() -> None:
    stranger = _spawn(f"{WORKSPACE}-another")
    ours = _spawn(WORKSPACE)
    try:
        assert stop_stale_agent_group(stranger.pid, MARKER) == "not_ours"
        assert ours.wait(timeout=10) == -9
        assert stranger.poll() is None
    finally:
        for p in (stranger, ours):
            p.kill()
            p.wait()
