"""Heuristic Policy for ``mujoco/swimmer``: an open-loop travelling wave along the body.

Observation (8): [front angle, joint 1, joint 2, x velocity, y velocity, front angular velocity, joint 1 velocity,
joint 2 velocity] (10 with the position when ``exclude_current_positions_from_observation`` is false); action:
two joint torques in [-1, 1]. The Policy ignores the observation and drives both joints with sine waves of the
same period, the rear joint lagging the front one by ``PHASE`` radians, so a wave runs from head to tail and
pushes the swimmer forwards (+x), like an eel. The step counter is the only state.
"""

import math
from typing import Any

import numpy as np

AMPLITUDE = 1.0
PERIOD_STEPS = 60.0
PHASE = 0.8


class TravellingWave:
    def __init__(self) -> None:
        self.t = 0

    def act(self, observation: Any) -> Any:
        angle = 2.0 * math.pi * self.t / PERIOD_STEPS
        self.t += 1
        return np.array([AMPLITUDE * math.sin(angle), AMPLITUDE * math.sin(angle - PHASE)], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return TravellingWave()
