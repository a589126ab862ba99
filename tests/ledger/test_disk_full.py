"""A full disk, simulated with a tiny tmpfs: the ledger refuses the write, keeps every committed Event, and works
again once space is freed; a Run that fills its disk stops with an evoledger error and ``evoledger resume`` finishes it.

Mounting needs root; without it (or without tmpfs) the tests skip and say why.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from evoledger.ledger.errors import EvoLedgerError, IntegrityError
from evoledger.ledger.events import AgentExited, AgentStarted, FinishRejected
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from evoledger.projections import run_state

_EVOLEDGER = str(Path(sys.executable).parent / "evoledger")


@contextlib.contextmanager
def _tmpfs(size: str) -> Iterator[Path]:
    """A fresh tmpfs of ``size`` mounted on a temporary directory (skips the test when that is impossible)."""
    if os.geteuid() != 0:
        pytest.skip("simulating a full disk mounts a tiny tmpfs, which needs root")
    mountpoint = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        mountpoint.rmdir()
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); no full disk to simulate")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)
        mountpoint.rmdir()


def _fill(path: Path) -> None:
    """Write ``path`` until the filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with pytest.raises(OSError, match="No space left on device"):
            _write_forever(fd)
    finally:
        os.close(fd)


def _write_forever(fd: int) -> None:
    while True:
        os.write(fd, b"\0" * 65536)


def _event(message: str = "x") -> FinishRejected:
    return FinishRejected(code="invalid_request", message=message, retryable=False)


def test_an_append_on_a_full_disk_fails_cleanly_and_succeeds_once_space_is_freed() -> None:
    with _tmpfs("2m") as disk, Ledger.create(disk / "run") as book:
        book.append([_event(), _event()])
        before = book.head()
        _fill(disk / "ballast")
        with pytest.raises(EvoLedgerError, match="full"):
            book.append([_event("y" * 2000)])
        with pytest.raises(EvoLedgerError):
            book.objects.put(os.urandom(2 * 1024 * 1024))  # a large Object goes to a file
        with pytest.raises(EvoLedgerError):
            book.objects.put(os.urandom(3000))
        assert book.head() == before  # nothing half-appended
        assert book.manifest.read() == before
        report = verify(disk / "run")
        assert report.ok, report.problems
        assert report.log_head == before
        (disk / "ballast").unlink()
        book.append([_event("after")])  # the same open ledger carries on
        assert book.head().count == before.count + 1
        assert verify(disk / "run").ok


def test_a_full_disk_is_reported_as_a_full_disk_not_as_damage() -> None:
    with _tmpfs("2m") as disk, Ledger.create(disk / "run") as book:
        book.append([_event()])
        _fill(disk / "ballast")
        with pytest.raises(EvoLedgerError) as caught:
            book.append([_event("y" * 2000)])
    message = str(caught.value)
    assert not isinstance(caught.value, IntegrityError), message
    assert "free" in message
    assert "damaged" not in message
    assert "backup" not in message


SUPPORT = Path(__file__).resolve().parents[1] / "support"  # tests/support/session_call.py
AGENT = r"""
import json, os, socket, struct, time, sys
WS = os.environ["EVOLEDGER_WORKSPACE"]

sys.path.insert(0, __SUPPORT__)
from session_call import call

marker = os.path.join(WS, "analysis", "attempt")
first = not os.path.exists(marker)
open(marker, "w").close()
if first:
    call("submit", program="program", episodes="0:1")
    fd = os.open(os.path.join(WS, "analysis", "ballast"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:  # fill the disk
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        os.close(fd)  # so that deleting the ballast frees the space
    try:
        call("submit", program="program", episodes="1:2")  # the Host cannot record this
    except Exception:
        pass
    time.sleep(30)  # still here if the Host does not stop the Agent when it fails
else:  # restarted by `evoledger resume`
    reply = call("submit", program="program", episodes="2:3")
    call("finish", candidates=[reply["result"]["submission_id"]])
""".replace("__SUPPORT__", repr(str(SUPPORT)))

PROGRAM = """
def make_policy(context):
    context.action_space.seed(context.policy_seed % 2**32)

    class _Policy:
        def act(self, observation):
            return context.action_space.sample()

    return _Policy()
"""


@dataclass(frozen=True)
class FullDiskRun:
    """A Run whose Agent filled the Run's disk, as it was right after the Host stopped."""

    run_dir: Path
    returncode: int
    stderr: str
    agent_pid: int
    agent_running_after_failure: bool


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_EVOLEDGER, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def full_disk_run() -> Iterator[FullDiskRun]:
    scratch = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    (scratch / "agent.py").write_text(AGENT, encoding="utf-8")
    (scratch / "program").mkdir()
    (scratch / "program" / "policy.py").write_text(PROGRAM, encoding="utf-8")
    agent_pid = 0
    with _tmpfs("4m") as disk:
        try:
            run_dir = disk / "r"
            failed = _cli(
                "run",
                "toy-counter",
                "--program",
                str(scratch / "program"),
                "--agent",
                f"command:{sys.executable} {scratch / 'agent.py'}",
                "--record-to",
                str(run_dir),
                "--episode-budget",
                "4",
                "--validation-episodes",
                "0",
                "--assessment-episodes",
                "0",
                "--finish-grace",
                "0.5",
                "--json",
            )
            with Ledger.open(run_dir) as book:
                started = [r.event for r in book.events(kinds=["agent-started"]) if isinstance(r.event, AgentStarted)]
            agent_pid = started[-1].pid
            yield FullDiskRun(run_dir, failed.returncode, failed.stderr, agent_pid, _running(agent_pid))
        finally:
            if agent_pid:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(agent_pid, signal.SIGKILL)
            shutil.rmtree(scratch, ignore_errors=True)


def test_a_run_that_fills_its_disk_stops_with_a_clear_error_and_resumes_once_space_is_freed(
    full_disk_run: FullDiskRun,
) -> None:
    run_dir = full_disk_run.run_dir
    # stopped with one evoledger error line, not a traceback
    assert full_disk_run.returncode >= 2, full_disk_run.stderr
    assert full_disk_run.stderr.startswith("error: "), full_disk_run.stderr[-2000:]
    assert "Traceback" not in full_disk_run.stderr
    assert "full" in full_disk_run.stderr
    # the ledger verifies up to its last committed Event: the first submission, nothing of the second
    report = verify(run_dir)
    assert report.ok, report.problems
    assert report.manifest_head == report.log_head
    with Ledger.open(run_dir) as book:
        state = run_state.fold(r.event for r in book.events())
    assert state.submission_order == ("submission-000001",)
    assert state.ended_reason is None
    assert state.charged - state.refunded + state.budget_left == state.episode_budget
    # free space, resume: the restarted Agent submits and finishes
    (run_dir / "workspace" / "analysis" / "ballast").unlink()
    resumed = _cli("resume", str(run_dir), "--trust-recorded-agent", "--json")  # its own command: Agent
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads(resumed.stdout)
    assert result["reason"] == "finished"
    assert result["selected"] == "submission-000002"
    assert result["budget_used"] == 2
    assert verify(run_dir).ok
    with Ledger.open(run_dir) as book:
        exits = [r.event for r in book.events(kinds=["agent-exited"]) if isinstance(r.event, AgentExited)]
        ended = [r.data()["reason"] for r in book.records(kinds=["run-ended"])]
    assert [e.reason for e in exits] == ["host_crashed", "finished"]
    assert ended == ["finished"]
    assert not _running(full_disk_run.agent_pid)  # resume ended the first Agent's group


def test_the_agent_is_stopped_when_the_host_fails(full_disk_run: FullDiskRun) -> None:
    assert not full_disk_run.agent_running_after_failure
