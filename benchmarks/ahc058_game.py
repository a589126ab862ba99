"""AtCoder AHC058 A "Apple Incremental Game": an independent case generator and simulator of the public rules.

No AtCoder statement text, tool or input is included; the rules below are the published problem's, the generator is
the reference harness's own (``evopolicygym-independent``), drawn from :class:`~.contest_stream.CaseStream`.

* 10 machine ids ``j``, 4 levels ``l``, 500 turns, 1 apple at the start; every machine count ``B[l][j]`` starts at
  1 and every power ``P[l][j]`` at 0.
* Case (domain ``evopolicygym-apple-incremental/generator/v1\\0``): capacities ``A = [1] + 9 x nearest(10**(2u))``,
  sorted ascending (1 to 100); then for ``l = 0..3``, ``j = 0..9``: ``C[l][j] = nearest(A[j] * 500**l *
  10**(2u))``, except ``C[0][0] = 1`` (drawn from nothing). ``u`` is ``unit()``, ``nearest(x) = floor(x + 0.5)``.
* A turn: an optional upgrade of ``(l, j)`` costing ``C[l][j] * (P[l][j] + 1)`` apples (more than the apples held:
  the whole Action is rejected); ``P[l][j] += 1``. Then production, levels 0 to 3, machines 0 to 9: ``produced =
  B[l][j] * P[l][j]``; level 0 adds ``A[j] * produced`` apples, a level ``l > 0`` adds ``produced`` to
  ``B[l-1][j]``.
* Score of a case: ``round(100_000 * log2(apples))`` after turn 500 (Python's ``round``; 0 apples score as 1).

All quantities are exact Python integers: apples and machine counts outgrow 64 bits in strong play.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from evoledger.benchmarks.contest_stream import CaseStream, nearest

__all__ = [
    "DOMAIN",
    "LEVELS",
    "MACHINES",
    "TURNS",
    "AppleCase",
    "AppleGame",
    "IllegalUpgrade",
    "final_score",
    "generate_case",
]

DOMAIN: Final = b"evopolicygym-apple-incremental/generator/v1\0"
LEVELS: Final = 4
MACHINES: Final = 10
TURNS: Final = 500
_COST_GROWTH: Final = 500


class IllegalUpgrade(ValueError):
    """An upgrade the rules refuse (it costs more apples than are held)."""


@dataclass(frozen=True, slots=True)
class AppleCase:
    """One case: machine capacities ``A[j]`` and base costs ``C[l][j]``."""

    capacities: tuple[int, ...]
    costs: tuple[tuple[int, ...], ...]


def generate_case(case_seed: int) -> AppleCase:
    """The case of ``case_seed`` (see the module docstring for the draws, in order)."""
    stream = CaseStream(DOMAIN, case_seed)
    capacities = sorted([1] + [nearest(10 ** (2 * stream.unit())) for _ in range(MACHINES - 1)])
    costs: list[tuple[int, ...]] = []
    for level in range(LEVELS):
        row = []
        for j in range(MACHINES):
            if level == 0 and j == 0:
                row.append(1)
            else:
                row.append(nearest(capacities[j] * _COST_GROWTH**level * 10 ** (2 * stream.unit())))
        costs.append(tuple(row))
    return AppleCase(tuple(capacities), tuple(costs))


def final_score(apples: int) -> int:
    """A case's score: ``round(100_000 * log2(apples))`` (0 apples score as 1 apple would: 0)."""
    return round(100_000 * math.log2(max(apples, 1)))


@dataclass(slots=True)
class AppleGame:
    """The state of one case in play; :meth:`play` applies one turn."""

    case: AppleCase
    apples: int = 1
    turn: int = 0
    counts: list[list[int]] = field(default_factory=lambda: [[1] * MACHINES for _ in range(LEVELS)])
    powers: list[list[int]] = field(default_factory=lambda: [[0] * MACHINES for _ in range(LEVELS)])
    upgrades: int = 0
    spent: int = 0
    produced: int = 0

    @property
    def done(self) -> bool:
        return self.turn >= TURNS

    def upgrade_cost(self, level: int, machine: int) -> int:
        """What upgrading ``(level, machine)`` costs now."""
        return self.case.costs[level][machine] * (self.powers[level][machine] + 1)

    def cheapest_affordable(self) -> int | None:
        """The cost of the cheapest upgrade the apples held pay for, ``None`` if none."""
        costs = [self.upgrade_cost(level, j) for level in range(LEVELS) for j in range(MACHINES)]
        affordable = [c for c in costs if c <= self.apples]
        return min(affordable) if affordable else None

    def play(self, upgrade: tuple[int, int] | None) -> tuple[int, int]:
        """One turn: the optional upgrade, then production. Returns ``(cost paid, apples produced)``.

        Raises :class:`IllegalUpgrade` (nothing changed) if the upgrade costs more than the apples held.
        """
        if self.done:
            raise RuntimeError("the game is over")
        cost = 0
        if upgrade is not None:
            level, machine = upgrade
            cost = self.upgrade_cost(level, machine)
            if cost > self.apples:
                raise IllegalUpgrade(
                    f"upgrading level {level} machine {machine} costs {cost} apples; only {self.apples} are held"
                )
            self.apples -= cost
            self.powers[level][machine] += 1
            self.upgrades += 1
            self.spent += cost
        capacities, counts, powers = self.case.capacities, self.counts, self.powers
        gained = 0
        for j in range(MACHINES):
            gained += capacities[j] * counts[0][j] * powers[0][j]
        for level in range(1, LEVELS):
            above, below, power = counts[level], counts[level - 1], powers[level]
            for j in range(MACHINES):
                below[j] += above[j] * power[j]
        self.apples += gained
        self.produced += gained
        self.turn += 1
        return cost, gained
