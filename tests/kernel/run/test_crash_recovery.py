"""SIGKILL the real Host at many points of a real Run, resume it, and compare with an uninterrupted Run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.ledger.events import AgentStarted
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from evoledger.projections import run_state
from evoledger.projections.mirror import fold as fold_mirror
from evoledger.projections.mirror_files import diff_mirror

RUN_ARGS = [
    "run",
    "cartpole",
    "--episode-budget",
    "20",
    "--validation-episodes",
    "2",
    "--max-candidates",
    "2",
    "--assessment-episodes",
    "3",
    "--seed",
    "7",
    "--json",
]
VOLATILE = {"duration_ms", "pid", "run_id"}  # run_id is the directory name
AGENT_KINDS = {"agent-started", "agent-exited"}


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    full_env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    return subprocess.run(["evoledger", *args], capture_output=True, text=True, env=full_env, timeout=300)


def _facts(run_dir: Path) -> list[tuple[str, Any]]:
    """Everything the Run decided and observed, minus timings, pids and Agent process bookkeeping."""
    out = []
    with Ledger.open(run_dir) as book:
        for stored in book.records():
            if stored.kind in AGENT_KINDS:
                continue
            data = stored.data()
            out.append((stored.kind, {k: v for k, v in data.items() if k not in VOLATILE}))
    return out


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evc-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def uninterrupted(scratch: Path) -> list[tuple[str, Any]]:
    done = _cli(*RUN_ARGS, "--record-to", str(scratch / "clean"))
    assert done.returncode == 0, done.stderr[-2000:]
    return _facts(scratch / "clean")


@pytest.mark.parametrize(
    "crash_after",
    [
        "submission-accepted:2",  # accepted, no Episode run yet
        "episode-finished:7",  # mid-Episodes of the second submission
        "feedback-published:1",  # published, mirror not yet synced, reply not sent
        "validation-episode-finished:1",  # mid-Validation
        "candidate-selected:1",  # selected, Assessment not run
    ],
)
def test_kill_resume_equals_uninterrupted(
    scratch: Path, uninterrupted: list[tuple[str, Any]], crash_after: str
) -> None:
    run_dir = scratch / crash_after.replace(":", "-")
    crashed = _cli(*RUN_ARGS, "--record-to", str(run_dir), env={"EVOLEDGER_CRASH_AFTER": crash_after})
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    resumed = _cli("resume", str(run_dir), "--json")
    assert resumed.returncode == 0, resumed.stderr[-2000:]

    assert verify(run_dir).ok
    facts = _facts(run_dir)
    assert facts == uninterrupted
    with Ledger.open(run_dir) as book:
        state = run_state.fold(r.event for r in book.events())
        # exact budget accounting: charged once per accepted Episode, nothing lost, nothing twice
        accepted = sum(len(state.submissions[s].episodes) for s in state.submission_order)
        assert state.charged == accepted
        assert state.charged - state.refunded + state.budget_left == state.episode_budget
        assert state.ended_reason == "finished"
        # the Agent's mirror equals a fresh fold of the log
        fresh = fold_mirror((r.stored.visibility, r.event) for r in book.events())
        assert diff_mirror(fresh, run_dir / "workspace" / "feedback", book.objects) == []
        kinds = [r.stored.kind for r in book.events(kinds=["agent-exited"])]
        first_agent = next(r.event for r in book.events(kinds=["agent-started"]))
    if not crash_after.startswith(("validation", "candidate")):
        assert len(kinds) == 2  # the crashed attempt was recorded, and the restarted Agent's exit
    assert isinstance(first_agent, AgentStarted)
    assert _no_live_process(first_agent.pid)  # nothing of the dead Host's Agent is left running


def _no_live_process(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat.rpartition(b")")[2].split()[0] == b"Z"


def test_resume_refuses_a_record_that_is_not_a_run(tmp_path: Path) -> None:
    record = tmp_path / "eval"
    done = _cli("evaluate", "--episodes", "2", "--record-to", str(record))
    assert done.returncode == 0, done.stderr
    refused = _cli("resume", str(record))
    assert refused.returncode == 2
    assert "not a Run" in refused.stderr


def test_resume_of_an_ended_run_changes_nothing(scratch: Path, uninterrupted: list[tuple[str, Any]]) -> None:
    before = _facts(scratch / "clean")
    again = _cli("resume", str(scratch / "clean"), "--json")
    assert again.returncode == 0, again.stderr
    assert _facts(scratch / "clean") == before == uninterrupted
