"""Crafter's long-horizon-survival (LHS) reward profile: the per-step credit and the score over Episodes.

The profile pays for staying alive and healthy for a long time, with a smaller secondary credit for progress and
upkeep. An Episode's return is its *survival part* plus its *secondary part*:

* survival, per step: ``0.01`` while the player is alive after the step (``0`` on the step it dies) plus
  ``0.03 * alive * min(health, food, drink) / 9``, so at most 0.04 a step;
* secondary:

  - the first unlock of an achievement pays ``0.10 * log2(1 + w)`` with the weights :data:`WEIGHTS` (collect
    diamond 1024; iron pickaxe and sword 256; collect iron 64; defeat skeleton, stone tools, place furnace 32; coal,
    stone, defeat zombie, place stone 16; eat plant, wood tools 8; place plant, place table 4; drink, sapling,
    wood, eat cow, wake up 1);
  - a productive repeat (another unit of an achievement in :data:`REPEAT_QUOTAS`) pays 20 % of that achievement's
    unlock credit, at most its quota of repeats within any 300 consecutive steps (wood 6, sapling 3, stone 6,
    coal 3, iron 2, diamond 1, zombie 2, skeleton 1, place plant 3); more repeats in the window pay nothing;
  - maintenance: at most 1.2 within any 300 consecutive steps, split evenly between drink and food, counted in
    units: drinking is 1 drink unit (at most 15 in the window, 0.04 each), eating a cow 6 food units and eating a
    plant 4 (at most 12 in the window, 0.05 each).

Over the N Episodes of an Evaluation, with ``k = max(1, ceil(N / 4))``, the score is
``0.75 * mean(survival) + 0.25 * mean(the k lowest survival parts) + mean(secondary)``: the worst quarter counts
twice, so a Policy that sometimes dies early pays for it. An Episode the Policy failed counts 0 for both parts.

This module knows nothing of crafter itself: :class:`SurvivalCredit` reads the achievement counters and the
inventory the environment reports after each step.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = [
    "ALIVE_CREDIT",
    "MAINTENANCE",
    "REPEAT_QUOTAS",
    "REPEAT_SHARE",
    "SURVIVAL_THRESHOLDS",
    "VITAL_CREDIT",
    "WEIGHTS",
    "WINDOW",
    "SurvivalCredit",
    "survival_score",
    "unlock_credit",
]

ALIVE_CREDIT: Final = 0.01
VITAL_CREDIT: Final = 0.03
UNLOCK_SCALE: Final = 0.10
REPEAT_SHARE: Final = 0.2
WINDOW: Final = 300
"""The rolling window (steps) of the repeat quotas and the maintenance caps."""
WEIGHTS: Final[Mapping[str, int]] = {
    "collect_diamond": 1024,
    "make_iron_pickaxe": 256,
    "make_iron_sword": 256,
    "collect_iron": 64,
    "defeat_skeleton": 32,
    "make_stone_pickaxe": 32,
    "make_stone_sword": 32,
    "place_furnace": 32,
    "collect_coal": 16,
    "collect_stone": 16,
    "defeat_zombie": 16,
    "place_stone": 16,
    "eat_plant": 8,
    "make_wood_pickaxe": 8,
    "make_wood_sword": 8,
    "place_plant": 4,
    "place_table": 4,
    "collect_drink": 1,
    "collect_sapling": 1,
    "collect_wood": 1,
    "eat_cow": 1,
    "wake_up": 1,
}
REPEAT_QUOTAS: Final[Mapping[str, int]] = {
    "collect_wood": 6,
    "collect_sapling": 3,
    "collect_stone": 6,
    "collect_coal": 3,
    "collect_iron": 2,
    "collect_diamond": 1,
    "defeat_zombie": 2,
    "defeat_skeleton": 1,
    "place_plant": 3,
}
MAINTENANCE: Final[Mapping[str, tuple[str, int, int, float]]] = {
    # achievement -> (channel, units per occurrence, channel cap in units per window, credit per unit)
    "collect_drink": ("drink", 1, 15, 0.6 / 15),
    "eat_cow": ("food", 6, 12, 0.6 / 12),
    "eat_plant": ("food", 4, 12, 0.6 / 12),
}
SURVIVAL_THRESHOLDS: Final = (150, 200, 250, 300, 400)
"""Feedback reports the share of Episodes that lived at least this many steps."""


def unlock_credit(achievement: str) -> float:
    """What the first unlock of ``achievement`` pays."""
    return UNLOCK_SCALE * math.log2(1 + WEIGHTS[achievement])


class _Window:
    """Amounts granted at steps, summed over the last :data:`WINDOW` steps."""

    def __init__(self) -> None:
        self._granted: deque[tuple[int, float]] = deque()

    def used(self, step: int) -> float:
        while self._granted and self._granted[0][0] <= step - WINDOW:
            self._granted.popleft()
        return math.fsum(amount for _, amount in self._granted)

    def grant(self, step: int, amount: float) -> None:
        if amount > 0:
            self._granted.append((step, amount))


class SurvivalCredit:
    """The LHS credit of one Episode, step by step (see the module docstring)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._repeats = {name: _Window() for name in REPEAT_QUOTAS}
        self._maintenance = {"drink": _Window(), "food": _Window()}
        self.survival = 0.0
        """The survival part so far."""
        self.secondary = 0.0
        """The secondary part so far."""
        self.unlocks = 0.0
        self.repeats = 0.0
        self.maintenance = 0.0

    def step(self, step: int, counts: Mapping[str, int], inventory: Mapping[str, int], alive: bool) -> float:
        """The credit of step ``step`` (1 for the first): ``counts`` are crafter's cumulative achievement counters
        after it, ``inventory`` the player's counters, ``alive`` whether the player lives after it."""
        survival = 0.0
        if alive:
            vitals = min(int(inventory["health"]), int(inventory["food"]), int(inventory["drink"]))
            survival = ALIVE_CREDIT + VITAL_CREDIT * max(0, vitals) / 9.0
        secondary = 0.0
        for name, count in counts.items():
            before = self._counts.get(name, 0)
            new = int(count) - before
            if new <= 0 or name not in WEIGHTS:
                continue
            self._counts[name] = int(count)
            if before == 0:
                credit = unlock_credit(name)
                self.unlocks += credit
                secondary += credit
            repeats = new - 1 if before == 0 else new
            if repeats and name in REPEAT_QUOTAS:
                window = self._repeats[name]
                paid = min(repeats, max(0, REPEAT_QUOTAS[name] - round(window.used(step))))
                window.grant(step, float(paid))
                credit = paid * REPEAT_SHARE * unlock_credit(name)
                self.repeats += credit
                secondary += credit
            if name in MAINTENANCE:
                channel, units, cap, per_unit = MAINTENANCE[name]
                window = self._maintenance[channel]
                granted = min(new * units, max(0, cap - round(window.used(step))))
                window.grant(step, float(granted))
                credit = granted * per_unit
                self.maintenance += credit
                secondary += credit
        self.survival += survival
        self.secondary += secondary
        return survival + secondary


def survival_score(parts: Sequence[tuple[float, float]], digits: int = 6) -> float | None:
    """The LHS score of Episodes given as ``(survival part, secondary part)``; ``None`` without Episodes."""
    if not parts:
        return None
    survival = sorted(p[0] for p in parts)
    k = max(1, math.ceil(0.25 * len(parts)))
    score = (
        0.75 * math.fsum(survival) / len(survival)
        + 0.25 * math.fsum(survival[:k]) / k
        + math.fsum(p[1] for p in parts) / len(parts)
    )
    return float(round(score, digits))
