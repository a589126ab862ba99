"""Baseline Policy for the ``crafter/*`` Benchmarks: a seeded random walk that ignores the observation.

It picks a direction that does not reverse the previous one, moves 2 to 5 steps that way, then acts ``do`` once
(collect, attack or drink whatever is in front), and repeats. All randomness comes from ``context.policy_seed``.

Actions: 0 noop, 1 move_left, 2 move_right, 3 move_up, 4 move_down, 5 do, 6 sleep, 7 place_stone, 8 place_table,
9 place_furnace, 10 place_plant, 11 make_wood_pickaxe, 12 make_stone_pickaxe, 13 make_iron_pickaxe,
14 make_wood_sword, 15 make_stone_sword, 16 make_iron_sword.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
"""

from typing import Any

import numpy as np

MOVES = (1, 2, 3, 4)
REVERSE = {1: 2, 2: 1, 3: 4, 4: 3}
DO = 5


class RandomWalk:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.direction = 0
        self.plan: list[int] = []

    def act(self, observation: Any) -> Any:
        if not self.plan:
            choices = [m for m in MOVES if m != REVERSE.get(self.direction)]
            self.direction = int(self.rng.choice(choices))
            self.plan = [self.direction] * int(self.rng.integers(2, 6)) + [DO]
        return self.plan.pop(0)


def make_policy(context: Any) -> Any:
    return RandomWalk(context.policy_seed)
