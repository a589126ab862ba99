"""Every packaged heuristic beats its baseline through the real evaluate(): Policy processes, recording, Feedback.

The core install's Benchmarks run in the default suite; every family's under ``pytest -m catalog``
(tests/support/catalog.py). The Programs are the ones each Benchmark ships (``benchmark.programs``).
"""

from __future__ import annotations

import pytest
from evoledger.kernel.authoring import BenchmarkPrograms, benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.tests.support.catalog import benchmark_params, core_names

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

EPISODES = {"toy-text/blackjack": 200, "toy-text/frozen-lake": 30}  # stochastic outcomes need more Episodes
EPISODES |= {"codechef/warehous-warehouseman": 4, "atcoder/ahc054-treants-forest": 4}  # long Episodes, wide margins
EPISODES |= {"vizdoom/my-way-home": 6}  # with CONFIG's 400 steps: the heuristic finds the vest in 2 (0.30 to -0.04)
LIMITS = {"codechef/warehous-warehouseman": PolicyLimits(act_timeout_seconds=60.0)}  # one act() solves the whole case
CONFIG = {"vizdoom/my-way-home": {"max_episode_steps": 400}}  # recorded 240x320x3 screens: 2,400 a Program, not 8,400
# vizdoom/deathmatch: 8 Episodes as they come (both Programs die within 350-1,740 steps): 6.38 kills to the no-op's 2.75


def test_every_gymnasium_benchmark_ships_a_baseline_and_a_heuristic() -> None:
    gymnasium = [n for n in core_names() if default_registry().make(n).spec.metadata["source"] == "gymnasium"]
    assert {n.partition("/")[2] for n in gymnasium} >= {
        "cartpole", "acrobot", "mountain-car", "mountain-car-continuous", "pendulum",
        "blackjack", "cliff-walking", "frozen-lake", "taxi",
    }  # fmt: skip
    for name in gymnasium:
        assert _programs(name).baseline.is_dir()
        assert _programs(name).heuristic is not None


def _programs(name: str) -> BenchmarkPrograms:
    return benchmark_programs(default_registry().make(name))


@pytest.mark.parametrize("name", benchmark_params())
def test_the_heuristic_beats_the_baseline(name: str) -> None:
    programs = _programs(name)
    if programs.heuristic is None:
        pytest.skip(f"{name} ships no heuristic Program (a test Benchmark)")
    config = EvaluationConfig(episodes=EPISODES.get(name, 8), seed=3, limits=LIMITS.get(name, PolicyLimits()))
    ref = BenchmarkRef(name=name, config=CONFIG.get(name, {}))
    with LocalExecutor(ref) as executor:  # one pre-warmed worker for both Programs
        baseline = evaluate(programs.baseline, ref, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, ref, config=config, executor=executor)
    assert heuristic.failures == 0, [e.failure for e in heuristic.episodes if e.failure]
    assert baseline.score is not None
    assert heuristic.score is not None
    minimize = default_registry().make(name).spec.score_direction == "minimize"
    beats = heuristic.score < baseline.score if minimize else heuristic.score > baseline.score
    assert beats, (name, heuristic.score, baseline.score)
    assert all(e.trajectory_digest for e in heuristic.episodes)
