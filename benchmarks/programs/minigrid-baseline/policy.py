"""MiniGrid / BabyAI baseline: a random-turn explorer that ignores the mission.

It walks forward while the cell ahead can be entered (empty, floor, goal or an open door; never lava), opens a
closed door in front of it, and otherwise, or with probability 0.15, turns left or right at random. It never picks
anything up, so it only succeeds where reaching a goal square by chance is enough.
"""

import random
from typing import Any

_WALKABLE = {1, 3, 8}  # empty, floor, goal
_DOOR = 4


def make_policy(context: Any) -> Any:
    rng = random.Random(context.policy_seed)

    class Policy:
        def act(self, observation: Any) -> int:
            kind, _colour, state = (int(v) for v in observation["image"][3][5])
            if kind == _DOOR and state == 1:
                return 5  # toggle: open a closed door
            free = kind in _WALKABLE or (kind == _DOOR and state == 0)
            if free and rng.random() > 0.15:
                return 2  # forward
            return rng.choice((0, 1))

    return Policy()
