"""SIGKILL the real Host at many points of a real Run, resume it, and compare with an uninterrupted Run."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.replay import replay
from evoledger.ledger.events import AgentStarted
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH, chain_hash
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from evoledger.projections import run_state
from evoledger.projections.mirror import fold as fold_mirror
from evoledger.projections.mirror_files import diff_mirror

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

RUN_ARGS = [
    "run",
    "cartpole",
    "--episode-budget",
    "10",  # five submissions of two Episodes, then two Candidates validated: every crash point below, and short
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
        "episode-finished:7",  # mid-Episodes of the fourth submission (the first of its two finished)
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


def _planned_and_keys(run_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    with Ledger.open(run_dir) as book:
        planned = [r.stored.data() for r in book.events(kinds=["episode-planned"])]
        keys = [r.stored.data()["key"] for r in book.events(kinds=["run-key"])]
    return planned, keys


def test_a_run_with_a_random_key_resumes_with_the_key_it_recorded(scratch: Path) -> None:
    """Without --seed nothing outside the ledger can give the plan again: resume must read the key back."""
    run_dir = scratch / "random-key"
    args = [a for a in RUN_ARGS if a not in ("--seed", "7")]
    crashed = _cli(*args, "--record-to", str(run_dir), env={"EVOLEDGER_CRASH_AFTER": "submission-accepted:2"})
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    before = _planned_and_keys(run_dir)
    assert len(before[1]) == 1
    resumed = _cli("resume", str(run_dir), "--json")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["reason"] == "finished"
    assert _planned_and_keys(run_dir) == before  # one key, the same plan
    assert replay(run_dir).ok


def test_resume_refuses_a_run_whose_key_event_was_removed(scratch: Path) -> None:
    run_dir = scratch / "keyless"
    crashed = _cli(*RUN_ARGS, "--record-to", str(run_dir), env={"EVOLEDGER_CRASH_AFTER": "submission-accepted:1"})
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    try:  # remove the run-key Event and re-chain the rest, so the ledger still opens
        rows = conn.execute(
            "SELECT kind, version, visibility, payload, recorded_at FROM events ORDER BY seq"
        ).fetchall()
        conn.execute("BEGIN")
        conn.execute("DELETE FROM events")
        prev = GENESIS_HASH
        for seq, (kind, version, visibility, payload, at) in enumerate(r for r in rows if r[0] != "run-key"):
            digest = chain_hash(prev, kind, version, visibility, payload)
            conn.execute(
                "INSERT INTO events (seq, kind, version, visibility, payload, prev_hash, hash, recorded_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (seq, kind, version, visibility, payload, prev, digest, at),
            )
            prev = digest
        conn.execute("COMMIT")
    finally:
        conn.close()
    HeadManifest(run_dir / MANIFEST_NAME).write(Head(prev, len(rows) - 1))
    refused = _cli("resume", str(run_dir))
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "records no run-key Event" in refused.stderr
    assert _planned_and_keys(run_dir)[1] == []  # no new key was drawn
