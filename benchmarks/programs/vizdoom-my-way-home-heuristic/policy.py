"""Heuristic Policy for ``vizdoom/my-way-home``: roam the rooms, bouncing off walls, and run to the vest when seen.

Perception: the vest is the only green thing in the maze (green above both red and blue by 40, green at least 80),
anywhere in the lower two thirds of the screen (rows 80-240). The player is blocked when a MOVE_FORWARD leaves the
middle of the screen (rows 60-180, columns 80-240) all but unchanged (mean absolute difference under 2), i.e. it
faces a wall. Control: with the vest in view, turn towards it when its middle is more than 12 pixels off the centre
column (160), else MOVE_FORWARD; without it, MOVE_FORWARD until blocked (or, with probability WANDER a step, on a
whim, which breaks loops along the same walls), then turn (TURN_RIGHT or TURN_LEFT) for 4 to 16 steps, and go on;
the random choices come from the Policy's own generator seeded by ``context.policy_seed``. Actions
are found by name in ``context.metadata["actions"]``.
"""

import random
from typing import Any

import numpy as np

CENTRE = 160
AIM = 12
WANDER = 0.05


class Roamer:
    def __init__(self, actions: list[str], seed: int) -> None:
        self.forward = actions.index("move_forward")
        self.left = actions.index("turn_left")
        self.right = actions.index("turn_right")
        self.rng = random.Random(seed)
        self.previous: Any = None
        self.moved = False
        self.turning: list[int] = []

    def act(self, observation: Any) -> int:
        screen = np.asarray(observation["screen"], dtype=np.int16)
        middle = screen[60:180, 80:240]
        blocked = self.moved and self.previous is not None and float(np.abs(middle - self.previous).mean()) < 2.0
        self.previous = middle
        low = screen[80:]
        r, g, b = low[..., 0], low[..., 1], low[..., 2]
        vest = np.flatnonzero(((g - r > 40) & (g - b > 40) & (g >= 80)).any(axis=0))
        self.moved = False
        if vest.size:
            self.turning = []
            offset = (float(vest.min()) + float(vest.max())) / 2 - CENTRE
            if abs(offset) > AIM:
                return self.right if offset > 0 else self.left
        elif (blocked or self.rng.random() < WANDER) and not self.turning:
            turn = self.rng.choice((self.left, self.right))
            self.turning = [turn] * self.rng.randint(4, 16)
        if self.turning:
            return self.turning.pop()
        self.moved = True
        return self.forward


def make_policy(context: Any) -> Any:
    return Roamer(list(context.metadata["actions"]), int(context.policy_seed))
