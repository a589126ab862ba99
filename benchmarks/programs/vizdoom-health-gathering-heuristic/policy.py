"""Heuristic Policy for ``vizdoom/health-gathering`` and ``-supreme``: walk towards the medkits seen on the floor.

Perception: a medkit is a bright, grey-white blob on the green floor: pixels of the lower screen (rows 110-240)
whose three channels are all above 150 and within 40 of each other. Control: with medkits in view, turn towards
the nearest one (the lowest bright row) when it is more than 25 pixels from the centre column (160), else move
forward; with none in view, move forward and turn right every fourth step to sweep the room. Actions are found by
name in ``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160
TOLERANCE = 25


class Gatherer:
    def __init__(self, actions: list[str]) -> None:
        self.forward = actions.index("move_forward")
        self.left = actions.index("turn_left")
        self.right = actions.index("turn_right")
        self.t = 0

    def act(self, observation: Any) -> int:
        self.t += 1
        screen = np.asarray(observation["screen"], dtype=np.int16)[110:]
        bright = (screen.min(axis=-1) > 150) & (screen.max(axis=-1) - screen.min(axis=-1) < 40)
        rows = np.flatnonzero(bright.any(axis=1))
        if rows.size == 0:
            return self.right if self.t % 4 == 0 else self.forward
        nearest = rows.max()
        columns = np.flatnonzero(bright[max(nearest - 6, 0) : nearest + 1].any(axis=0))
        offset = float(columns.mean()) - CENTRE
        if offset > TOLERANCE:
            return self.right
        if offset < -TOLERANCE:
            return self.left
        return self.forward


def make_policy(context: Any) -> Any:
    return Gatherer(list(context.metadata["actions"]))
