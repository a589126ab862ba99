"""Stable-Retro Airstriker at length (``pytest -m catalog``): whole Episodes through evaluate(), a CLI Run, replay.

``check_benchmark`` and the generic heuristic-beats-baseline comparison run for ``retro/airstriker`` in
tests/benchmarks/test_conformance.py and test_programs_through_evaluate.py; the default suite runs
``test_retro_airstriker.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.benchmarks.retro_airstriker import EXTRA
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

pytestmark = [
    pytest.mark.catalog,
    pytest.mark.skipif(not EXTRA.installed, reason=f"needs the extra 'retro': {EXTRA.install_command}"),
]

NAME = "retro/airstriker"
CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evt-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent  # evoledger-session, as the README's install puts it on PATH
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_the_heuristic_scores_hundreds_where_the_baseline_scores_nothing() -> None:
    programs = benchmark_programs(default_registry().make(NAME))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=4, seed=3)
    with LocalExecutor(BenchmarkRef(name=NAME)) as executor:
        baseline = evaluate(programs.baseline, NAME, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, NAME, config=config, executor=executor)
    assert baseline.failures == heuristic.failures == 0
    assert baseline.score == 0.0
    assert heuristic.score is not None
    assert heuristic.score >= 150.0, heuristic.score  # about 275 points an Episode
    assert (
        baseline.feedback_content["outcome_counts"] == heuristic.feedback_content["outcome_counts"] == {"game_over": 4}
    )


def test_the_ram_observation_runs_through_evaluate() -> None:
    programs = benchmark_programs(default_registry().make(NAME))
    ref = BenchmarkRef(name=NAME, config={"observation": "ram"})
    result = evaluate(programs.baseline, ref, config=EvaluationConfig(episodes=2, seed=1))
    assert [e.status for e in result.episodes] == ["ok", "ok"]
    assert result.score == 0.0


def test_run_with_the_builtin_agent_then_replay_execute_and_export_from_the_cli(run_root: Path) -> None:
    """The emulator is deterministic given the seed (sticky frames included): ``replay --execute`` reproduces it."""
    record = run_root / "run"
    small = ("--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5")
    _cli("run", NAME, *small, "--agent-isolation", "local", "--record-to", str(record), cwd=run_root)
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished"
    assert report["selected"] is not None
    assert report["assessment_score"] is not None
    replayed = json.loads(_cli("replay", str(record), "--execute", "--json", cwd=run_root).stdout)
    assert replayed["ok"] is True
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert execution["status"] == "pass"
    assert "6 of 6 Episodes reproduced" in execution["summary"]
    _cli("export", str(record), "--out", str(run_root / "dataset"), cwd=run_root)
    exported = sorted(p.name for p in (run_root / "dataset").iterdir() if p.is_dir())
    assert {"episodes", "steps"} <= set(exported)
