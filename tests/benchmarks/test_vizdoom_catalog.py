"""Every ViZDoom scenario for real (``pytest -m catalog``): action names, CLI Runs with the built-in Agent, replay.

``check_benchmark`` and the heuristic-beats-the-no-op comparison run for every ``vizdoom/*`` Benchmark in
tests/benchmarks/test_conformance.py and test_programs_through_evaluate.py; the default suite runs
``test_vizdoom.py``.
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
from evoledger.benchmarks.vizdoom_scenarios import EXTRA, SCENARIOS
from evoledger.kernel.registry import default_registry
from evoledger.tests.benchmarks.test_vizdoom import engine_actions

pytestmark = [
    pytest.mark.catalog,
    pytest.mark.skipif(not EXTRA.installed, reason=f"needs the extra 'vizdoom': {EXTRA.install_command}"),
]

NAMES = [s.name for s in SCENARIOS]
CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evz-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent  # evoledger-session, as the README's install puts it on PATH
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


@pytest.mark.parametrize("name", NAMES)
def test_the_named_actions_are_the_engines(name: str) -> None:
    benchmark = default_registry().make(name)
    assert benchmark.spec.metadata["actions"] == engine_actions(benchmark)


@pytest.mark.parametrize("name", NAMES)
def test_the_builtin_agent_completes_a_short_run_through_the_cli(name: str, run_root: Path) -> None:
    small = ("--episode-budget", "2", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5")
    record = run_root / "run"
    _cli("run", name, *small, "--set", "max_episode_steps=200", "--agent-isolation", "local", "--record-to",
         str(record), cwd=run_root)  # fmt: skip
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished"
    assert report["assessment_score"] is not None


def test_replay_execute_reproduces_a_run_of_the_heuristic(run_root: Path) -> None:
    """The engine is deterministic given the seed: ``replay --execute`` reproduces every trajectory digest."""
    name = "vizdoom/basic"
    record = run_root / "run"
    program = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "vizdoom-basic-heuristic"
    small = ("--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "7")
    _cli("run", name, "--program", str(program), *small, "--record-to", str(record), cwd=run_root)
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["assessment_score"] > 0  # the monster killed
    replayed = json.loads(_cli("replay", str(record), "--execute", "--json", cwd=run_root).stdout)
    assert replayed["ok"] is True
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert "6 of 6 Episodes reproduced" in execution["summary"]
