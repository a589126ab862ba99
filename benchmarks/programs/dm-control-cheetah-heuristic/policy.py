"""Heuristic Policy for ``dm-control/cheetah-run``: an open-loop gait, one sine wave per joint.

Action: six torques in [-1, 1] (back thigh, shin, foot, front thigh, shin, foot). Every joint follows
``AMPLITUDES[j] * sin(2 pi FREQUENCY t + PHASES[j])`` clipped to the bounds, ``t`` the simulated time
(``control_timestep`` seconds per step, from the public parameters); the observation is not used. The numbers came
from a short random search (65 gaits tried on 400-step Episodes). It runs forward but sometimes stumbles or flips,
so it is a start for feedback (body pitch from ``position``, speed from ``velocity``), not a good runner.
"""

import math
from typing import Any

import numpy as np

FREQUENCY = 1.801
AMPLITUDES = (1.094, 0.624, 1.607, 0.2, 0.874, 1.122)
PHASES = (-0.193, 4.988, 0.555, 4.409, 2.293, 4.752)


class SineGait:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0

    def act(self, observation: Any) -> Any:
        t = self.steps * self.timestep
        self.steps += 1
        wave = [a * math.sin(2.0 * math.pi * FREQUENCY * t + p) for a, p in zip(AMPLITUDES, PHASES, strict=True)]
        return np.clip(np.array(wave, dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return SineGait(float(context.environment_parameters.get("control_timestep", 0.01)))
