"""Full Runs through the real stack: Host, Unix socket, `evoledger-session` processes, Agents, judging."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.errors import ConfigError, LedgerExistsError
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from evoledger.projections import mirror, run_state
from evoledger.projections.mirror_files import diff_mirror, sync_mirror

SCRIPTED_AGENT = r"""
import json, os, shutil, subprocess, sys
ws = os.environ["EVOLEDGER_WORKSPACE"]
log = []
def call(*args):
    exe = shutil.which("evoledger-session")
    argv = [exe, *args] if exe else [sys.executable, "-m", "evoledger.kernel.session.client", *args]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ws)
    last_err = (done.stderr.strip().splitlines() or ["{}"])[-1]
    out = json.loads(done.stdout) if done.returncode == 0 else json.loads(last_err)
    log.append({"args": list(args), "exit": done.returncode, "out": out})
    return out
call("status")
call("submit", "program", "--episodes", "0:999")        # outside the pool -> episode_limit
call("submit", "missing", "--episodes", "0:2")          # no such Program -> program_invalid
call("submit", "program", "--episodes", "0:2")          # ok (2 of 6)
call("submit", "program", "--episodes", "0:5")          # 5 > 4 left -> budget_exhausted
call("finish", "submission-000009")                     # unknown_submission
call("finish", "submission-000001", "submission-000001")  # duplicate_submission
call("submit", "program", "--episodes", "2:4")          # ok
call("finish", "submission-000001", "submission-000002")  # candidate_limit (1 without validation)
call("finish", "submission-000002")                     # ok
call("submit", "program", "--episodes", "4:5")          # session_closed
with open(os.path.join(ws, "analysis", "session-log.json"), "w") as f:
    json.dump(log, f)
"""


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evl-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _host_secrets(run_dir: Path) -> set[str]:
    with Ledger.open(run_dir) as book:
        secrets = set()
        for r in book.events(visibility="host"):
            data = r.stored.data()
            for key in ("env_seed", "policy_seed", "seed"):
                if isinstance(data.get(key), int) and data[key] > 10_000:
                    secrets.add(str(data[key]))
            if isinstance(data.get("key"), str):  # the Run's secret key (run-key)
                secrets.add(data["key"])
        return secrets


def test_default_hill_climb_run_end_to_end(run_root: Path) -> None:
    config = RunConfig(  # small: the default Run itself is conftest's readme_main_run
        episode_budget=12, validation=ValidationConfig(episodes=2), assessment=AssessmentConfig(episodes=2)
    )
    result = run(config, record_to=run_root / "r")
    assert result.reason == "finished"
    assert result.selected is not None
    assert result.assessment_score is not None
    assert result.budget_used + result.budget_left == result.budget_total == 12
    assert verify(run_root / "r").ok
    with Ledger.open(run_root / "r") as book:
        state = run_state.fold(r.event for r in book.events())
        kinds = [stored.kind for stored in book.records()]
        # the projection the Host kept equals a fresh fold; the Agent mirror on disk equals a fresh fold
        assert state.ended_reason == "finished"
        assert state.selected == result.selected
        fresh = mirror.fold((r.stored.visibility, r.event) for r in book.events())
        assert diff_mirror(fresh, run_root / "r" / "workspace" / "feedback", book.objects) == []
        # deleting feedback/ and rebuilding from the log reproduces it byte for byte
        feedback = run_root / "r" / "workspace" / "feedback"
        before = {p.relative_to(feedback): p.read_bytes() for p in feedback.rglob("*") if p.is_file()}
        shutil.rmtree(feedback)
        sync_mirror(fresh, feedback, book.objects)
        after = {p.relative_to(feedback): p.read_bytes() for p in feedback.rglob("*") if p.is_file()}
        assert before == after
        assert before
    for kind in (
        "run-created",
        "agent-started",
        "submission-accepted",
        "feedback-published",
        "finish-accepted",
        "validation-episode-finished",
        "candidate-selected",
        "assessment-finished",
        "run-ended",
    ):
        assert kind in kinds
    # nothing Host-private is readable by the Agent
    secrets = _host_secrets(run_root / "r")
    assert secrets
    for path in (run_root / "r" / "workspace").rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(s in text for s in secrets), f"{path} leaks a Host seed"
            assert "validation-episode" not in text
            assert "assessment" not in path.name
    latest = json.loads((run_root / "r" / "workspace" / "feedback" / "latest.json").read_text())
    assert latest["budget_left"] >= 0


def test_every_host_rejection_code_through_the_real_session(run_root: Path) -> None:
    script = run_root / "agent.py"
    script.write_text(SCRIPTED_AGENT, encoding="utf-8")
    config = RunConfig(
        benchmark=BenchmarkRef(name="toy-counter"),
        episode_budget=6,
        validation=ValidationConfig(episodes=0),
        assessment=AssessmentConfig(episodes=2),
        agent=AgentConfig(name=f"command:{sys.executable} {script}"),
    )
    result = run(
        config,
        record_to=run_root / "r",
        initial_program=_toy_program(run_root),
    )
    log = json.loads((run_root / "r" / "workspace" / "analysis" / "session-log.json").read_text())
    codes = [(entry["exit"], (entry["out"].get("error") or {}).get("code")) for entry in log]
    assert codes == [
        (0, None),
        (1, "episode_limit"),
        (1, "program_invalid"),
        (0, None),
        (1, "budget_exhausted"),
        (1, "unknown_submission"),
        (1, "duplicate_submission"),
        (0, None),
        (1, "candidate_limit"),
        (0, None),
        (1, "session_closed"),
    ]
    assert result.reason == "finished"
    assert result.selected == "submission-000002"
    assert result.budget_used == 4
    assert result.budget_left == 2
    with Ledger.open(run_root / "r") as book:
        state = run_state.fold(r.event for r in book.events())
    assert state.submission_rejections == 4
    assert state.finish_rejections == 3
    assert verify(run_root / "r").ok


def _toy_program(root: Path) -> Path:
    program = root / "toy-program"
    program.mkdir()
    (program / "policy.py").write_text(
        "def make_policy(context):\n"
        "    class P:\n"
        "        def act(self, observation):\n"
        "            return context.action_space.sample()\n"
        "    context.action_space.seed(context.policy_seed % 2**32)\n"
        "    return P()\n",
        encoding="utf-8",
    )
    return program


def test_run_refuses_an_existing_record_and_says_how_to_resume(run_root: Path) -> None:
    config = RunConfig(
        episode_budget=2, validation=ValidationConfig(episodes=0), assessment=AssessmentConfig(episodes=0)
    )
    run(config, record_to=run_root / "r")
    with pytest.raises(LedgerExistsError, match="evoledger resume"):
        run(config, record_to=run_root / "r")


def test_strict_budget_policy_that_cannot_be_spent_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="require_budget_exhaustion"):
        RunConfig(
            episode_budget=100,
            max_submissions=2,
            max_episodes_per_submission=10,
            finish_budget_policy="require_budget_exhaustion",
        )
