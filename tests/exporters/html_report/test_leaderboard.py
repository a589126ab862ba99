"""The comparison's statistics: the mean Assessment score per Agent x Benchmark and its 95% Student-t interval."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any

import pytest
from evoledger.exporters.html_report.leaderboard import leaderboard, mean_interval, t_quantile_975
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import AgentStarted, BenchmarkIdentity, RunCreated
from evoledger.projections import learning_curve
from evoledger.projections.learning_curve import LearningCurve
from hypothesis import given
from hypothesis import strategies as st


def _curve(
    agent: str, benchmark: str, score: float | None, seed: int, params: int = 1, **settings: Any
) -> LearningCurve:
    created = RunCreated(
        run_id=f"{agent}-{seed}",
        benchmark=BenchmarkIdentity.of(benchmark, {"n": params}),
        episode_budget=10,
        max_submissions=10,
        pool_commitment=digest_of(b"pool"),
        benchmark_spec={"score_direction": "maximize"},
        seed=seed,
        created_by="test",
        config={"agent": {"name": agent, "home": f"/tmp/home-{seed}", **settings}},
    )
    curve = learning_curve.fold([created, AgentStarted(agent=agent, command=("a",), pid=1)])
    return replace(curve, state=replace(curve.state, assessment_score=score, assessed=score is not None))


def test_rows_group_agent_by_benchmark_and_rank_by_mean() -> None:
    curves = [
        _curve("a", "cartpole", 1.0, 1),
        _curve("a", "cartpole", 2.0, 2),
        _curve("a", "cartpole", 3.0, 3),
        _curve("b", "cartpole", 9.0, 1),
        _curve("b", "cartpole", None, 2),
        _curve("a", "cartpole", 5.0, 1, params=2),
        _curve("a", "taxi", 4.0, 1),
    ]
    rows = leaderboard(curves)
    assert [(r.agent, r.benchmark, r.params, r.runs, r.scores) for r in rows] == [
        ("b", "cartpole", '{"n":1}', 2, (9.0,)),
        ("a", "cartpole", '{"n":1}', 3, (1.0, 2.0, 3.0)),
        ("a", "cartpole", '{"n":2}', 1, (5.0,)),
        ("a", "taxi", '{"n":1}', 1, (4.0,)),
    ]
    b, a = rows[0], rows[1]
    assert (b.mean, b.half_width, b.unassessed) == (9.0, None, 1)  # one assessed Run: no interval
    assert a.mean == 2.0
    assert a.half_width == pytest.approx(4.303 / math.sqrt(3))  # s = 1, t(0.975, 2) = 4.303
    assert a.seeds == (1, 2, 3)


def test_the_same_agent_with_another_model_or_effort_is_another_row() -> None:
    """Never averaged together: a sweep comparing one CLI's models would otherwise show one row for all of them.
    Where it ran (its home folder, its binary) does not make another row."""
    curves = [
        _curve("claude-code", "cartpole", 400.0, 1, model="opus"),
        _curve("claude-code", "cartpole", 300.0, 2, model="opus", executable="/opt/claude"),
        _curve("claude-code", "cartpole", 100.0, 1, model="haiku"),
        _curve("claude-code", "cartpole", 200.0, 1, model="haiku", effort="high", args=["--x", "1"]),
        _curve("codex", "cartpole", 50.0, 1, view_image=True),
        _curve("codex", "cartpole", 60.0, 2, view_image=False),
    ]
    rows = leaderboard(curves)
    assert [(r.agent, r.runs, r.scores) for r in rows] == [
        ("claude-code (model=opus)", 2, (400.0, 300.0)),
        ("claude-code (model=haiku, effort=high, args=--x 1)", 1, (200.0,)),
        ("claude-code (model=haiku)", 1, (100.0,)),
        ("codex", 1, (60.0,)),
        ("codex (view_image=yes)", 1, (50.0,)),
    ]


def test_the_t_quantiles() -> None:
    assert [t_quantile_975(df) for df in (1, 2, 4, 30, 31, 40, 59, 60, 119, 120, 10**6)] == [
        12.706,
        4.303,
        2.776,
        2.042,
        2.042,
        2.021,
        2.021,
        2.000,
        2.000,
        1.980,
        1.980,
    ]
    with pytest.raises(ValueError, match="at least 1"):
        t_quantile_975(0)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=40))
def test_the_interval_is_t_times_the_standard_error(values: list[float]) -> None:
    mean, half = mean_interval(values)
    assert mean == pytest.approx(statistics.fmean(values), abs=1e-6)
    expected = t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert half == pytest.approx(expected, rel=1e-9, abs=1e-9)
