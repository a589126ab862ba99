"""Heuristic Policy for ``dm-control/point-mass-easy``: a PD controller pulling the mass to the target.

Observation: ``position`` = [x, y] of the mass, ``velocity`` = [vx, vy]; the target sits at the centre of the
plane, (0, 0). Action: two forces in [-1, 1] (x and y actuators). The force is ``-KP * position - KD * velocity``,
clipped; near the target it is small, which the reward also asks for (it is scaled down by large controls).
"""

from typing import Any

import numpy as np

KP = 50.0
KD = 4.0


class PointMassController:
    def act(self, observation: Any) -> Any:
        position = np.asarray(observation["position"], dtype=np.float64)
        velocity = np.asarray(observation["velocity"], dtype=np.float64)
        return np.clip(-KP * position - KD * velocity, -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return PointMassController()
