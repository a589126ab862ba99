"""Heuristic Policy for ``highway/parking``: steer toward the goal spot and slow down as it gets close.

Observation: a dict of float64 arrays ``observation`` / ``achieved_goal`` / ``desired_goal``, each
``[x, y, vx, vy, cos_h, sin_h]`` scaled by ``[100, 100, 5, 5, 1, 1]``. Action: ``[acceleration, steering]`` in
[-1, 1] (acceleration scaled to +-5 m/s^2, steering to +-45 degrees).

The rule: express the goal in the car's frame; drive forward when the goal is ahead and in reverse when it is
behind; steer (pure pursuit) toward the goal, with the steering mirrored when reversing; aim for a speed that
shrinks with the remaining distance and reach it with a proportional throttle.
"""

import math
from typing import Any

import numpy as np

SCALE = np.array([100.0, 100.0, 5.0, 5.0, 1.0, 1.0])
WHEELBASE = 5.0
MAX_STEER = math.pi / 4
MAX_SPEED = 4.0
SPEED_GAIN = 0.8
THROTTLE_GAIN = 0.5


class PurePursuit:
    def act(self, observation: Any) -> Any:
        state = np.asarray(observation["observation"], dtype=np.float64) * SCALE
        goal = np.asarray(observation["desired_goal"], dtype=np.float64) * SCALE
        cos_h, sin_h = state[4], state[5]
        dx, dy = goal[0] - state[0], goal[1] - state[1]
        forward = dx * cos_h + dy * sin_h
        lateral = -dx * sin_h + dy * cos_h
        distance = math.hypot(dx, dy)
        direction = 1.0 if forward >= -1.0 else -1.0
        speed = state[2] * cos_h + state[3] * sin_h
        target = direction * min(MAX_SPEED, SPEED_GAIN * distance)
        accel = float(np.clip(THROTTLE_GAIN * (target - speed), -1.0, 1.0))
        curvature = 2.0 * lateral / max(distance**2, 1e-6)
        steer = math.atan(WHEELBASE * curvature) * direction
        steer = float(np.clip(steer / MAX_STEER, -1.0, 1.0))
        return np.array([accel, steer], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return PurePursuit()
