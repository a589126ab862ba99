"""Judging reports its progress: ``on_judged(phase, done, total)`` once per Validation and Assessment Episode.

A resumed Run counts the Episodes its log already holds as done, so its bars end at the same totals.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.kernel.run.resume import resume
from evoledger.ledger.signing_keys import load_or_create_default_key

CONFIG = RunConfig(
    benchmark=BenchmarkRef(name="frozen-lake"),
    agent=AgentConfig(name="baseline"),
    episode_budget=4,
    validation=ValidationConfig(episodes=2),
    assessment=AssessmentConfig(episodes=3),
    agent_isolation="local",
    seed=5,
)
_CLI = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()"]


def _counts(phase: str, first: int, total: int) -> list[tuple[str, int, int]]:
    return [(phase, done, total) for done in range(first, total + 1)]


def test_run_reports_each_validation_and_assessment_episode_once_with_its_total(tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    result = run(CONFIG, record_to=tmp_path / "run", on_judged=lambda *call: calls.append(call))
    assert result.reason == "finished"
    validated = 2 * len(result.validation)  # every Candidate on the 2 Validation Episodes
    assert validated > 0
    assert calls == _counts("validation", 0, validated) + _counts("assessment", 0, 3)


def test_a_resumed_run_counts_the_episodes_its_log_already_holds(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["run", "frozen-lake", "--agent", "baseline", "--agent-isolation", "local", "--episode-budget", "4"]
    args += ["--validation-episodes", "2", "--assessment-episodes", "3", "--seed", "5", "--max-candidates", "1"]
    env = {**os.environ, "EVOLEDGER_CRASH_AFTER": "validation-episode-finished:1"}
    crashed = subprocess.run(
        [*_CLI, *args, "--record-to", str(run_dir)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert crashed.returncode == -9, crashed.stderr  # killed right after the Candidate's Validation was recorded
    calls: list[tuple[str, int, int]] = []
    result = resume(
        run_dir,
        agent_isolation="local",
        signing_key=load_or_create_default_key(),  # the key the CLI signed the Run with
        on_judged=lambda *call: calls.append(call),
    )
    assert result.reason == "finished"
    assert calls == [("validation", 2, 2), *_counts("assessment", 0, 3)]  # nothing re-run, nothing counted twice
