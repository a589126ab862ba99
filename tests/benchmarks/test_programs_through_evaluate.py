"""Every packaged heuristic beats its baseline through the real evaluate(): Policy processes, recording, Feedback."""

from __future__ import annotations

import pytest
from evoledger.kernel.authoring import BenchmarkPrograms, benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

BENCHMARKS = sorted(
    n
    for n in default_registry().names()
    if not n.startswith(("minigrid/", "babyai/"))  # test_minigrid_catalog.py runs those
    and default_registry().make(n).spec.metadata["source"] == "gymnasium"
)
EPISODES = {"blackjack": 200, "frozen-lake": 30}  # stochastic outcomes need more Episodes to separate


def test_every_gymnasium_benchmark_ships_a_baseline_and_a_heuristic() -> None:
    assert set(BENCHMARKS) >= {
        "cartpole", "acrobot", "mountain-car", "mountain-car-continuous", "pendulum",
        "blackjack", "cliff-walking", "frozen-lake", "taxi",
    }  # fmt: skip
    for name in BENCHMARKS:
        assert _programs(name).baseline.is_dir()
        assert _programs(name).heuristic is not None


def _programs(name: str) -> BenchmarkPrograms:
    return benchmark_programs(default_registry().make(name))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_heuristic_beats_the_baseline(name: str) -> None:
    programs = _programs(name)
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=EPISODES.get(name, 8), seed=3)
    with LocalExecutor(BenchmarkRef(name=name)) as executor:  # one pre-warmed worker for both Programs
        baseline = evaluate(programs.baseline, name, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, name, config=config, executor=executor)
    assert heuristic.failures == 0, [e.failure for e in heuristic.episodes if e.failure]
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score, (name, heuristic.score, baseline.score)
    assert all(e.trajectory_digest for e in heuristic.episodes)
