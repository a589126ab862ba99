"""An AHC058 heuristic: buy the upgrade that most raises the apples the game would end with if nothing more changed.

With powers fixed, a machine column ``j`` grows linearly, and over ``R`` more productions it yields exactly

    A[j] * P0 * (R * B0 + C(R, 2) * P1 * B1 + C(R, 3) * P1 * P2 * B2 + C(R, 4) * P1 * P2 * P3 * B3)

apples (``C`` the binomial coefficient, ``Bl`` / ``Pl`` the column's counts and powers). Each turn the Policy
values waiting and every affordable upgrade by the apples held plus that yield of every column, and buys the best
one when it beats waiting by the factor ``1 + min_gain``. ``horizon`` scales the remaining turns in the value of the
upper levels (above 1: invest in them earlier). Its parameters live in ``params.json`` (tuned by ``hill-climb``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def _column_yield(capacity: int, counts: list[int], powers: list[int], remaining: int, horizon: int) -> int:
    """The column's apples over ``remaining`` productions, the upper levels valued over ``horizon`` of them."""
    total = remaining * counts[0]
    chain = 1
    for level in range(1, 4):
        chain *= powers[level]
        if chain == 0:
            break
        total += math.comb(horizon, level + 1) * chain * counts[level]
    return capacity * powers[0] * total


class GreedyValuePolicy:
    def __init__(self, min_gain: float, horizon: float) -> None:
        self.min_gain = min_gain
        self.horizon = horizon
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
        horizon = max(1, min(remaining + 200, round(remaining * self.horizon)))
        columns = []
        for j in range(10):
            counts = [machines[level][j] for level in range(4)]
            column = [powers[level][j] for level in range(4)]
            columns.append((counts, column))
        yields = [self._value(j, columns[j][0], columns[j][1], remaining, horizon) for j in range(10)]
        base = sum(yields)
        best_value, best = apples + base, None
        for level in range(4):
            for j in range(10):
                cost = self.costs[level][j] * (powers[level][j] + 1)
                if cost > apples:
                    continue
                raised = list(columns[j][1])
                raised[level] += 1
                value = apples - cost + base - yields[j] + self._value(j, columns[j][0], raised, remaining, horizon)
                if value > best_value:
                    best_value, best = value, (level, j)
        if best is None or best_value < (apples + base) * (1.0 + self.min_gain):
            return None
        return {"upgrade": [best[0], best[1]]}

    def _value(self, j: int, counts: list[int], powers: list[int], remaining: int, horizon: int) -> int:
        return _column_yield(self.capacities[j], counts, powers, remaining, horizon)


def make_policy(context: Any) -> GreedyValuePolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    return GreedyValuePolicy(float(params["min_gain"]), float(params["horizon"]))
