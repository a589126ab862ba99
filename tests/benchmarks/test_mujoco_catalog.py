"""Every MuJoCo task for real (``pytest -m catalog``): heuristic beats baseline, conformance, CLI Runs and replay.

Long: 1000-step Episodes of eleven physics simulations, a built-in-Agent Run per task and a replay. The default
suite runs ``test_mujoco.py`` instead.
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
from evoledger.benchmarks.mujoco import TASKS
from evoledger.kernel.authoring import benchmark_programs, check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

pytestmark = pytest.mark.catalog

NAMES = [t.name for t in TASKS]

EPISODES = {"mujoco/reacher": 20, "mujoco/pusher": 20}
"""Episodes per Program when comparing heuristic and baseline (5 unless named: random targets need more)."""
CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evm-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent  # evoledger-session, as the README's install puts it on PATH
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


@pytest.mark.parametrize("name", NAMES)
def test_the_heuristic_beats_the_zero_action(name: str) -> None:
    programs = benchmark_programs(default_registry().make(name))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=EPISODES.get(name, 5), seed=3)
    with LocalExecutor(BenchmarkRef(name=name)) as executor:
        baseline = evaluate(programs.baseline, name, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, name, config=config, executor=executor)
    assert baseline.failures == 0
    assert heuristic.failures == 0, [e.failure for e in heuristic.episodes if e.failure]
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score, (name, heuristic.score, baseline.score)


@pytest.mark.parametrize("name", NAMES)
def test_every_task_conforms(name: str) -> None:
    report = check_benchmark(default_registry().make(name), episodes=3, seed=0)
    assert report.ok, report.summary()


@pytest.mark.parametrize("name", NAMES)
def test_the_builtin_agent_completes_a_run_through_the_cli(name: str, run_root: Path) -> None:
    small = ("--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5")
    record = run_root / "run"
    _cli("run", name, *small, "--agent-isolation", "local", "--record-to", str(record), cwd=run_root)
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished"
    assert report["selected"] is not None
    assert report["assessment_score"] is not None


def test_evaluate_run_replay_execute_and_export_from_the_cli(run_root: Path) -> None:
    """MuJoCo is deterministic given the seed: ``replay --execute`` reproduces every trajectory digest."""
    name = "mujoco/hopper"
    heuristic = benchmark_programs(default_registry().make(name)).heuristic
    assert heuristic is not None
    done = _cli("evaluate", str(heuristic), "--benchmark", name, "--episodes", "3", "--json", cwd=run_root)
    result = json.loads(done.stdout)
    assert [e["status"] for e in result["episodes"]] == ["ok"] * 3
    assert result["score"] > 500.0  # it stays up: the zero action falls after about 150 steps
    record = run_root / "run"
    small = ("--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "7")
    _cli("run", name, "--program", str(heuristic), *small, "--record-to", str(record), cwd=run_root)
    replayed = json.loads(_cli("replay", str(record), "--execute", "--json", cwd=run_root).stdout)
    assert replayed["ok"] is True
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert execution["status"] == "pass"
    assert "6 of 6 Episodes reproduced" in execution["summary"]
    _cli("export", str(record), "--out", str(run_root / "dataset"), cwd=run_root)
    exported = sorted(p.name for p in (run_root / "dataset").iterdir() if p.is_dir())
    assert {"episodes", "steps"} <= set(exported)
