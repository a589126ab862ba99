"""The AHC058 baseline (the reference harness's): buy ``(0, 0)`` first, then the best benefit/cost upgrade.

An upgrade of ``(level, machine)`` is judged by the apples its one extra power would add by the end if nothing
changed, to first order: ``A[machine] * B[level][machine] * prod(P[k][machine] for k < level) * comb(remaining,
level + 1)``. Only upgrades costing at most half the apples held and whose benefit exceeds their cost are
considered; the best benefit / cost ratio is bought, otherwise the Policy waits.
"""

from __future__ import annotations

import math
from typing import Any


class BaselinePolicy:
    def __init__(self) -> None:
        self.capacities: list[int] = []
        self.costs: list[list[int]] = []

    def act(self, observation: dict[str, Any]) -> Any:
        if observation["initial"] is not None:
            self.capacities = list(observation["initial"]["capacities"])
            self.costs = [list(row) for row in observation["initial"]["costs"]]
        apples = observation["apples"]
        machines = observation["machines"]
        powers = observation["powers"]
        remaining = observation["turns_remaining"]
        if observation["turn"] == 0:
            return {"upgrade": [0, 0]} if self.costs[0][0] <= apples else None
        best: tuple[float, int, int] | None = None
        for level in range(4):
            for j in range(10):
                cost = self.costs[level][j] * (powers[level][j] + 1)
                if 2 * cost > apples:
                    continue
                below = 1
                for k in range(level):
                    below *= powers[k][j]
                benefit = self.capacities[j] * machines[level][j] * below * math.comb(remaining, level + 1)
                if benefit <= cost:
                    continue
                ratio = benefit / cost
                if best is None or ratio > best[0]:
                    best = (ratio, level, j)
        return None if best is None else {"upgrade": [best[1], best[2]]}


def make_policy(context: Any) -> BaselinePolicy:
    return BaselinePolicy()
