"""The Box2D family's long checks (``pytest -m catalog``): conformance, every heuristic beating its baseline through
the real evaluate(), and a built-in-Agent Run of every Benchmark through the CLI, with replay and export.

CarRacing Episodes are costly (96x96x3 images every step), so its checks cap ``max_episode_steps``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks import box2d
from evoledger.kernel.authoring import benchmark_programs, check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef

pytestmark = pytest.mark.catalog

ROOT = Path(__file__).resolve().parents[2]

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # case: (Benchmark name, settings)
    "lunar-lander": ("box2d/lunar-lander", {}),
    "lunar-lander-continuous": ("box2d/lunar-lander-continuous", {}),
    "lunar-lander-windy": ("box2d/lunar-lander", {"enable_wind": True}),
    "bipedal-walker": ("box2d/bipedal-walker", {}),
    "bipedal-walker-hardcore": ("box2d/bipedal-walker-hardcore", {}),
    "car-racing": ("box2d/car-racing", {"max_episode_steps": 300}),
    "car-racing-discrete": ("box2d/car-racing", {"max_episode_steps": 300, "continuous": False}),
}
EPISODES = {"car-racing": 2, "car-racing-discrete": 2, "lunar-lander-windy": 12, "bipedal-walker-hardcore": 12}
"""Episodes per Program in the heuristic-beats-baseline comparison (default 8)."""
MARGIN = {"bipedal-walker-hardcore": 10.0}
"""How much the heuristic's score must beat the baseline's by (default 50). On hardcore terrain the gait walks
further than the baseline (which falls at once, about -92 every time) but then falls at the first obstacles."""


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_box2d_benchmark_conforms(case: str) -> None:
    name, settings = CASES[case]
    if name == "box2d/car-racing":
        settings = {**settings, "max_episode_steps": 40}  # random driving: short Episodes suffice
    report = check_benchmark(box2d.BENCHMARKS[name](**settings), episodes=2, seed=0)
    assert report.ok, report.summary()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_heuristic_beats_the_baseline_through_evaluate(case: str) -> None:
    name, settings = CASES[case]
    programs = benchmark_programs(box2d.BENCHMARKS[name](**settings))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=EPISODES.get(case, 8), seed=3)
    ref = BenchmarkRef(name=name, config=settings)
    with LocalExecutor(ref) as executor:
        baseline = evaluate(programs.baseline, ref, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, ref, config=config, executor=executor)
    assert baseline.failures == 0
    assert heuristic.failures == 0, [e.failure for e in heuristic.episodes if e.failure]
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score + MARGIN.get(case, 50.0), (case, heuristic.score, baseline.score)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evoledger", *args],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )


RUN_SETTINGS = {"box2d/car-racing": ["--set", "max_episode_steps=60"]}


@pytest.mark.parametrize("name", list(box2d.BENCHMARKS))
def test_the_builtin_agent_completes_a_run_through_the_cli(name: str, tmp_path: Path) -> None:
    record = tmp_path / "run"
    done = _cli(
        "run",
        name,
        *RUN_SETTINGS.get(name, []),
        "--episode-budget",
        "6",
        "--validation-episodes",
        "1",
        "--assessment-episodes",
        "1",
        "--seed",
        "4",
        "--record-to",
        str(record),
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished", report
    mirror = record / "workspace" / "feedback"
    first = json.loads((mirror / "submission-000001" / "feedback.json").read_text(encoding="utf-8"))
    assert first["content"]["outcome_counts"], first  # Benchmark words, from the Episodes' last metrics


def test_replay_execute_and_export_a_car_racing_run_from_the_cli(tmp_path: Path) -> None:
    record = tmp_path / "run"
    done = _cli(
        "run",
        "box2d/car-racing",
        "--set",
        "max_episode_steps=30",
        "--agent",
        "baseline",
        "--episode-budget",
        "2",
        "--validation-episodes",
        "1",
        "--assessment-episodes",
        "1",
        "--seed",
        "6",
        "--record-to",
        str(record),
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    replayed = _cli("replay", str(record), "--execute", "-q", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout[-3000:] + replayed.stderr[-3000:]
    exported = _cli("export", str(record), "--out", str(tmp_path / "data"), "-q", cwd=tmp_path)
    assert exported.returncode == 0, exported.stdout[-3000:] + exported.stderr[-3000:]
    assert list((tmp_path / "data" / "steps").glob("*.parquet"))
