"""Heuristic Policy for ``dm-control/pendulum-swingup``: energy pumping, then a PD hold near upright.

Observation: ``orientation`` = [cos(angle), sin(angle)] (cos 1 = upright), ``velocity`` = [angular velocity];
action: one torque in [-1, 1], too weak to lift the pendulum directly (gravity needs about 4.9 at horizontal). So
the Policy pumps energy: the pendulum's energy relative to resting upright, ``E = w^2 / (2 W0^2) + cos - 1``, is
pushed towards 0 by full torque along the velocity while ``E`` is below 0 (against it above), and once the pendulum
is within ``HOLD_COS`` of upright a PD law on the angle holds it there (the reward is 1 within 8 degrees).
"""

import math
from typing import Any

import numpy as np

W0_SQUARED = 19.62
K_ENERGY = 20.0
HOLD_COS = 0.95
KP = 8.0
KD = 1.0


class PendulumController:
    def act(self, observation: Any) -> Any:
        cos, sin = (float(v) for v in observation["orientation"])
        w = float(observation["velocity"][0])
        if cos > HOLD_COS:
            torque = -KP * math.atan2(sin, cos) - KD * w
        else:
            energy = w * w / (2.0 * W0_SQUARED) + cos - 1.0
            torque = -K_ENERGY * energy * (1.0 if w >= 0 else -1.0)
        return np.array([min(max(torque, -1.0), 1.0)], dtype=np.float64)


def make_policy(context: Any) -> Any:
    return PendulumController()
