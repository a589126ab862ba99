"""The comparison of several Runs: Agent x Benchmark, the mean Assessment score and its 95% confidence interval.

The interval is Student's t over the Runs of a group (typically one per seed): ``mean +- t(0.975, n-1) * s / sqrt(n)``
with ``s`` the sample standard deviation. It is exact for normally distributed scores and needs no random draws (a
bootstrap would, and with the handful of seeds a comparison usually has it understates the spread). A group with
one assessed Run has no interval. Runs without an Assessment score are counted, not averaged.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from evoledger.projections.learning_curve import LearningCurve

__all__ = ["LeaderboardRow", "leaderboard", "mean_interval", "t_quantile_975"]

_T_975: Final = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
"""The 0.975 quantile of Student's t with 1..30 degrees of freedom (three decimals)."""
_T_975_BEYOND: Final = ((120, 1.980), (60, 2.000), (40, 2.021), (30, 2.042))


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (between table rows: the larger, wider one).

    >>> t_quantile_975(1), t_quantile_975(9), t_quantile_975(45), t_quantile_975(10_000)
    (12.706, 2.262, 2.021, 1.98)
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df <= len(_T_975):
        return _T_975[df - 1]
    return next(t for limit, t in _T_975_BEYOND if df >= limit)


def mean_interval(values: Sequence[float]) -> tuple[float, float | None]:
    """The mean of ``values`` and the half-width of its 95% t interval (``None`` for fewer than two values).

    >>> mean, half = mean_interval([1.0, 2.0, 3.0])
    >>> mean, round(half, 3)
    (2.0, 2.484)
    """
    if not values:
        raise ValueError("no values to average")
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return mean, None
    half = t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, half


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One Agent on one Benchmark (with its parameters) over its Runs."""

    agent: str
    benchmark: str
    params: str
    runs: int
    scores: tuple[float, ...]
    """The assessed Runs' Assessment scores, in the order the Runs were given."""
    seeds: tuple[int | None, ...]
    mean: float | None
    half_width: float | None

    @property
    def unassessed(self) -> int:
        return self.runs - len(self.scores)


def leaderboard(curves: Sequence[LearningCurve]) -> list[LeaderboardRow]:
    """One row per Agent x Benchmark (same parameters), best mean first in each Benchmark's score direction.

    An Agent is its name with its settings (``LearningCurve.agent_label``): the same Agent with another model or
    effort is another row, never averaged in."""
    groups: dict[tuple[str, str, str], list[LearningCurve]] = {}
    for curve in curves:
        params = json.dumps(curve.benchmark_params, sort_keys=True, separators=(",", ":"))
        groups.setdefault((curve.agent_label or "?", curve.benchmark_id, params), []).append(curve)
    rows: list[LeaderboardRow] = []
    for (agent, benchmark, params), members in groups.items():
        scores = tuple(c.assessment_score for c in members if c.assessment_score is not None)
        mean, half = mean_interval(scores) if scores else (None, None)
        seeds = tuple(c.seed for c in members)
        rows.append(LeaderboardRow(agent, benchmark, params, len(members), scores, seeds, mean, half))
    direction = {c.benchmark_id: c.direction for c in curves}

    def order(row: LeaderboardRow) -> tuple[str, str, int, float]:
        if row.mean is None:
            return (row.benchmark, row.params, 1, 0.0)
        signed = -row.mean if direction.get(row.benchmark) == "maximize" else row.mean
        return (row.benchmark, row.params, 0, signed)

    return sorted(rows, key=order)
