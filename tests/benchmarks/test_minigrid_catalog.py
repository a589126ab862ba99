"""Every MiniGrid, WFC and BabyAI Benchmark (``pytest -m catalog``): conformance, the heuristic Program against
the baseline through the real evaluate() (Policy processes, recording, Feedback), and a short built-in-Agent Run.

WFC presets are skipped when minigrid's install lacks their pattern images (its wheels and sdist do not ship them).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks import babyai, minigrid
from evoledger.kernel.authoring import benchmark_programs, check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig, run

pytest.importorskip("minigrid")
pytestmark = pytest.mark.catalog

NAMES = [*minigrid.BENCHMARKS, *babyai.BENCHMARKS]
EPISODES = 6
MORE_EPISODES = 20
"""DynamicObstacles: the baseline's random walk often reaches the goal of an open room quickly; 6 Episodes are too few
to separate it from the planner, which waits for moving balls."""


def _wfc_patterns_missing(name: str) -> bool:
    if not name.startswith("minigrid/wfc-"):
        return False
    from minigrid.envs.wfc import config as wfc_config

    return not (Path(wfc_config.PATTERN_PATH) / "SimpleMaze.png").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_check_benchmark_passes(name: str) -> None:
    if _wfc_patterns_missing(name):
        pytest.skip("minigrid's install lacks the WFC pattern images")
    factory = {**minigrid.BENCHMARKS, **babyai.BENCHMARKS}[name]
    kwargs = {"size": 15} if name.startswith("minigrid/wfc-") else {}
    report = check_benchmark(factory(**kwargs), episodes=2)
    assert report.ok, report.summary()


@pytest.mark.parametrize("name", NAMES)
def test_the_heuristic_beats_the_baseline_through_evaluate(name: str) -> None:
    if _wfc_patterns_missing(name):
        pytest.skip("minigrid's install lacks the WFC pattern images")
    factory = {**minigrid.BENCHMARKS, **babyai.BENCHMARKS}[name]
    programs = benchmark_programs(factory())
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=MORE_EPISODES if "dynamic-obstacles" in name else EPISODES, seed=3)
    with LocalExecutor(BenchmarkRef(name=name)) as executor:
        baseline = evaluate(programs.baseline, name, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, name, config=config, executor=executor)
    assert heuristic.failures == 0, [e.failure for e in heuristic.episodes if e.failure]
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score, (name, heuristic.score, baseline.score)


@pytest.mark.parametrize("name", NAMES)
def test_a_short_built_in_agent_run_finishes_with_a_selected_candidate(name: str) -> None:
    if _wfc_patterns_missing(name):
        pytest.skip("minigrid's install lacks the WFC pattern images")
    root = Path(tempfile.mkdtemp(prefix="evm-", dir="/tmp"))  # short: Unix socket paths are limited
    try:
        config = RunConfig(
            benchmark=BenchmarkRef(name=name),
            episode_budget=4,
            validation=ValidationConfig(episodes=1, max_candidates=2),
            assessment=AssessmentConfig(episodes=1),
            seed=5,
            agent_isolation="local",
        )
        result = run(config, record_to=root / "run")
        log = (root / "run" / "host" / "agent-1" / "stdout.log").read_text(encoding="utf-8")
        assert result.reason == "finished", log
        assert result.selected is not None, log
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_wfc_generates_levels_and_the_heuristic_solves_them_with_a_pattern_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, play_program: Any
) -> None:
    """The WFC path end to end, in-process, on a synthetic maze pattern standing in for the PNG minigrid omits."""
    import imageio.v2 as imageio
    import numpy as np
    from minigrid.envs.wfc import config as wfc_config

    pattern = np.zeros((8, 8, 3), np.uint8)  # white corridors on black walls, as WFC's maze patterns are
    pattern[1::2, :, :] = 255
    pattern[:, 1::2, :] = 255
    pattern[0::4, 2::4] = 0
    imageio.imwrite(tmp_path / "SimpleMaze.png", pattern)
    monkeypatch.setattr(wfc_config, "PATTERN_PATH", tmp_path)
    monkeypatch.setattr(wfc_config.WFC_PRESETS_ALL["MazeSimple"], "pattern_path", tmp_path / "SimpleMaze.png")
    benchmark = minigrid.BENCHMARKS["minigrid/wfc-maze-simple"](size=15)
    assert benchmark.spec.max_episode_steps == 900
    assert benchmark.spec.environment_parameters["size"] == 15
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    records = play_program(benchmark, programs.heuristic, count=3)
    feedback = benchmark.feedback(records)
    assert feedback.content["success_rate"] == 1.0
    assert feedback.score is not None
    assert feedback.score > 0.5
