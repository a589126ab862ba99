"""Heuristic Policy for ``pendulum``: energy-based swing-up, then a PD controller that holds it upright.

Pendulum-v1's dynamics are ``theta_ddot = 3 g / 2 * sin(theta) + 3 * torque`` (unit mass and length), so
``E = 0.5 * theta_dot^2 + 1.5 * g * (cos(theta) - 1)`` is conserved without torque and is 0 at rest upright.
Far from the top the Policy pushes along the velocity while E < 0 (adding energy); near the top it switches to
``torque = -(kp * theta + kd * theta_dot)``. Torques are clipped to the action bounds here, in the Policy,
because the Environment rejects out-of-range actions.
"""

import math
from typing import Any

import numpy as np


class SwingUpAndBalance:
    def __init__(self, g: float, max_torque: float) -> None:
        self.g = g
        self.max_torque = max_torque

    def act(self, observation: Any) -> Any:
        cos_t, sin_t, velocity = (float(v) for v in observation)
        theta = math.atan2(sin_t, cos_t)
        if cos_t > 0.85:
            torque = -(12.0 * theta + 2.5 * velocity)
        else:
            energy = 0.5 * velocity**2 + 1.5 * self.g * (cos_t - 1.0)
            direction = 1.0 if velocity >= 0 else -1.0
            torque = direction * self.max_torque if energy < 0 else -0.5 * velocity
        return np.array([max(-self.max_torque, min(self.max_torque, torque))], dtype=np.float32)


def make_policy(context: Any) -> Any:
    g = float(context.environment_parameters.get("g", 10.0))
    max_torque = float(context.action_space.high[0])
    return SwingUpAndBalance(g, max_torque)
