"""Heuristic Policy for ``dm-control/swimmer-swimmer6`` and ``swimmer-swimmer15``: a travelling wave down the body,
bent toward the target.

Observation: ``joints`` (one angle per joint, head to tail), ``to_target`` = the target relative to the nose in the
head's frame (m; the nose points along the head's -y), ``body_velocities``; action: one joint torque in [-1, 1] per
joint (5 or 14). Joint ``i`` gets ``AMPLITUDE * sin(2 pi FREQUENCY t - i * LAG) - STEERING * heading error`` clipped
to the bounds (``t`` the simulated time from ``control_timestep``): the wave runs from head to tail and pushes the
swimmer forward, and the constant bend turns it toward the target (the heading error is the target's angle from the
nose's direction, positive to the left). Within ``SLOW_DOWN`` m of the target the wave shrinks in proportion, so the
swimmer does not cross the target at full speed (the reward grows as the nose nears the target). The
numbers came from a short random search (about 80 tries on four swimmer6 Episodes); the wave is mostly saturated, a
square wave.
"""

import math
from typing import Any

import numpy as np

FREQUENCY = 0.54
AMPLITUDE = 2.26
LAG = 1.1
STEERING = 1.0
SLOW_DOWN = 0.15


class TravellingWave:
    def __init__(self, joints: int, timestep: float) -> None:
        self.joints = joints
        self.timestep = timestep
        self.steps = 0

    def act(self, observation: Any) -> Any:
        x, y = (float(v) for v in observation["to_target"])
        heading_error = math.atan2(x, -y)
        scale = min(1.0, math.hypot(x, y) / SLOW_DOWN)
        phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep
        self.steps += 1
        wave = [scale * AMPLITUDE * math.sin(phase - i * LAG) - STEERING * heading_error for i in range(self.joints)]
        return np.clip(np.array(wave, dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    timestep = float(context.environment_parameters.get("control_timestep", 0.03))
    return TravellingWave(int(context.action_space.shape[0]), timestep)
