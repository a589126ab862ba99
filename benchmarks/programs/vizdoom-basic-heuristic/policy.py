"""Heuristic Policy for ``vizdoom/basic``: aim at the monster, then shoot.

Perception: the monster is the only blue thing in the room: pixels of the screen's middle band (rows 60-180) whose
blue channel exceeds red by 40 and is above 90. Control: if none is seen, NOOP; if the monster's mean column is
within 6 pixels of the centre (160) ATTACK, else strafe towards it (MOVE_LEFT or MOVE_RIGHT, found by name in
``context.metadata["actions"]``).
"""

from typing import Any

import numpy as np

CENTRE = 160.0
AIM = 6.0


class Aim:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.left = actions.index("move_left")
        self.right = actions.index("move_right")

    def act(self, observation: Any) -> int:
        screen = np.asarray(observation["screen"], dtype=np.int16)[60:180]
        blue = (screen[..., 2] - screen[..., 0] > 40) & (screen[..., 2] > 90)
        columns = np.flatnonzero(blue.any(axis=0))
        if columns.size == 0:
            return 0
        offset = float(columns.mean()) - CENTRE
        if abs(offset) <= AIM:
            return self.attack
        return self.right if offset > 0 else self.left


def make_policy(context: Any) -> Any:
    return Aim(list(context.metadata["actions"]))
