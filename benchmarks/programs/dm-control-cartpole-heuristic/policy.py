"""Heuristic Policy for the ``dm-control/cartpole-*`` tasks: energy pumping to swing the pole up, then a linear
balance controller.

Observation: ``position`` = [cart x, cos(pole angle), sin(pole angle)] (cos 1 = upright), ``velocity`` = [cart
velocity, pole angular velocity]; action: one force in [-1, 1]. Near upright (cos above ``BALANCE_COS``) the force
is a fixed linear feedback on the pole angle, the pole's angular velocity and the cart's position and velocity.
Elsewhere it pumps energy: the pole's energy relative to resting upright, ``E = w^2 / (2 W0^2) + cos - 1``, is
driven towards 0 by a force along ``E * sign(w * cos)`` (below 0 it pushes against ``w * cos``), while a weak
spring keeps the cart near the centre of the rail.
"""

from typing import Any

import numpy as np

BALANCE_COS = 0.85
K_ANGLE = 10.0
K_RATE = 2.0
K_POSITION = 0.5
K_VELOCITY = 1.0
K_ENERGY = 2.0
W0_SQUARED = 14.7
K_CENTRE = 0.4
K_CENTRE_VELOCITY = 0.3


class CartpoleController:
    def act(self, observation: Any) -> Any:
        x, cos, sin = (float(v) for v in observation["position"])
        dx, w = (float(v) for v in observation["velocity"])
        if cos > BALANCE_COS:
            force = K_ANGLE * sin + K_RATE * w + K_POSITION * x + K_VELOCITY * dx
        else:
            energy = w * w / (2.0 * W0_SQUARED) + cos - 1.0
            force = K_ENERGY * energy * np.sign(w * cos) - K_CENTRE * x - K_CENTRE_VELOCITY * dx
        return np.array([min(max(force, -1.0), 1.0)], dtype=np.float64)


def make_policy(context: Any) -> Any:
    return CartpoleController()
