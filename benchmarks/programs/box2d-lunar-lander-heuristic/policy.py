"""Heuristic Policy for ``box2d/lunar-lander`` (discrete and continuous): a PD controller on attitude and altitude.

Two targets come from the state: a tilt that steers the lander back over the pad (lean towards x = 0, against the
horizontal velocity, at most 0.4 rad) and a hover height that shrinks as the lander nears the pad's x. Two PD terms
follow them: ``turn = 0.5 * (tilt_target - angle) - 1.0 * angular_velocity`` and ``lift = 0.5 * (height_target -
y) - 0.5 * y_velocity``. Once a leg touches the ground the lander only brakes its descent. Continuous actions are
the two terms themselves (clipped to [-1, 1] here, since the Environment rejects out-of-range actions); discrete
actions pick the engine whose term is largest.
"""

from typing import Any

import numpy as np


class PDLander:
    def __init__(self, continuous: bool) -> None:
        self.continuous = continuous

    def act(self, observation: Any) -> Any:
        x, y, vx, vy, angle, spin, left, right = (float(v) for v in observation)
        tilt_target = min(0.4, max(-0.4, 0.5 * x + 1.0 * vx))
        height_target = 0.55 * abs(x)
        turn = 0.5 * (tilt_target - angle) - 1.0 * spin
        lift = 0.5 * (height_target - y) - 0.5 * vy
        if left or right:  # touched down: stop turning, just soften the landing
            turn, lift = 0.0, -0.5 * vy
        if self.continuous:
            main = lift * 20.0 - 1.0
            lateral = -turn * 20.0
            return np.clip(np.array([main, lateral], dtype=np.float32), -1.0, 1.0)
        if lift > abs(turn) and lift > 0.05:
            return 2  # main engine
        if turn < -0.05:
            return 3  # right engine: turn clockwise
        if turn > 0.05:
            return 1  # left engine: turn anticlockwise
        return 0


def make_policy(context: Any) -> Any:
    return PDLander(bool(context.environment_parameters.get("continuous", False)))
