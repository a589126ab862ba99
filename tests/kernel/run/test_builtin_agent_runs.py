"""The built-in hill-climb Agent in real Runs: it solves CartPole from the CLI and finishes on every Benchmark."""

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
from evoledger.kernel.agents.builtin.families import family_for
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.tests.support.catalog import benchmark_params
from evoledger.tests.support.readme_run import MainJobRun

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evb-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent  # evoledger-session, as the README's install puts it on PATH
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_the_default_run_solves_cartpole_through_the_cli(readme_main_run: MainJobRun) -> None:
    """``evoledger run`` with its defaults: the built-in Agent reaches Gymnasium's threshold (475) in Assessment.

    The session's one run of the README's main job with ``--seed 1`` (conftest's ``readme_main_run``).
    """
    run_dir = readme_main_run.run_dir
    report = json.loads((run_dir / "host" / "report.json").read_text(encoding="utf-8"))
    log = (run_dir / "host" / "agent-1" / "stdout.log").read_text(encoding="utf-8")
    assert report["reason"] == "finished", log
    assert report["selected"] is not None
    assert report["assessment_score"] >= 475.0, log
    assert report["budget_used"] <= 100
    assert "confirmed candidates reach the target score 475.0" in log


@pytest.mark.parametrize("name", benchmark_params())  # a family's Benchmarks under pytest -m catalog
def test_a_short_hill_climb_run_finishes_with_a_selected_candidate_on_every_benchmark(
    name: str, run_root: Path
) -> None:
    config = RunConfig(
        benchmark=BenchmarkRef(name=name),
        episode_budget=4,
        validation=ValidationConfig(episodes=1, max_candidates=2),
        assessment=AssessmentConfig(episodes=1),
        seed=5,
        agent_isolation="local",
    )
    folder = run_root / name.replace("/", "-")  # family/task: one folder
    result = run(config, record_to=folder)
    log = (folder / "host" / "agent-1" / "stdout.log").read_text(encoding="utf-8")
    assert result.reason == "finished", log
    assert result.selected is not None, log
    assert result.assessment_score is not None
    # a Benchmark's own tunable Program or a generic family, and the log says which; without either (an image, a
    # dict with text), the Agent says there is nothing to tune and submits the starting Program
    benchmark = default_registry().make(name)
    tunable = benchmark_programs(benchmark).tunable is not None
    spec = json.loads(json.dumps(benchmark.spec.model_dump(mode="json")))
    if tunable or family_for(spec) is not None:
        assert "tuning the" in log
    else:
        assert "nothing to tune" in log


def test_a_configured_benchmark_starts_from_its_own_program_through_the_cli(run_root: Path) -> None:
    """The Benchmark carries its Programs: a ``--set`` variant and a toy Benchmark need no name lookup."""
    small = ("--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "2")
    _cli("run", "frozen-lake", "--set", "map_name=8x8", *small, "--record-to", str(run_root / "fl"), cwd=run_root)
    report = json.loads((run_root / "fl" / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished"
    assert report["selected"] is not None
    done = _cli("evaluate", "--benchmark", "toy-counter", "--episodes", "2", "--json", cwd=run_root)
    assert [e["status"] for e in json.loads(done.stdout)["episodes"]] == ["ok", "ok"]
