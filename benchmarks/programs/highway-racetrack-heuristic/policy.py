"""Heuristic Policy for ``highway/racetrack``: follow the own lane's centre line by pure pursuit.

Observation: float32 occupancy grid ``[2, 12, 12]``, layer 0 = other vehicles, layer 1 = lane centre lines
("on_road" cells); 3 m cells covering +-18 m around the car, aligned with the car: the first grid axis runs forward
(cell 6 starts at the car), the second sideways (positive to the car's right, the direction of positive steering).
Action: ``[steering]`` in [-1, 1], scaled to +-45 degrees (the speed is controlled by the environment).

The rule: walk forward row by row from the car, each time keeping the road cell closest sideways to the previous
one (so the own lane is tracked, not the neighbouring one), take the point ``LOOKAHEAD`` rows ahead as the target
and steer toward it with the pure-pursuit law ``delta = atan(2 * L * sin(alpha) / distance)``. No road in sight
keeps the last steering.
"""

import math
from typing import Any

import numpy as np

CELL = 3.0
HALF = 18.0
FIRST_AHEAD = 6
LOOKAHEAD = 3
WHEELBASE = 5.0
MAX_STEER = math.pi / 4


class PurePursuit:
    def __init__(self) -> None:
        self.steer = 0.0

    def act(self, observation: Any) -> Any:
        road = np.asarray(observation, dtype=np.float64)[1] > 0.5
        centres = -HALF + CELL * (np.arange(road.shape[1]) + 0.5)
        side = 0.0
        target = None
        for row in range(FIRST_AHEAD, min(FIRST_AHEAD + LOOKAHEAD + 1, road.shape[0])):
            cells = centres[road[row]]
            if cells.size == 0:
                break
            side = float(cells[np.argmin(np.abs(cells - side))])
            target = (-HALF + CELL * (row + 0.5), side)
        if target is not None:
            forward, side = target
            distance = math.hypot(forward, side)
            alpha = math.atan2(side, forward)
            delta = math.atan(2.0 * WHEELBASE * math.sin(alpha) / max(distance, 1.0))
            self.steer = float(np.clip(delta / MAX_STEER, -1.0, 1.0))
        return np.array([self.steer], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return PurePursuit()
