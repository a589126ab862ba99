"""Heuristic Policy for ``mountain-car-continuous``: full force in the direction the car is moving.

Pumping energy along the velocity reaches the flag in about a hundred steps; the energy cost (0.1 * force^2 per
step) is small next to the +100 for reaching the flag.
"""

from typing import Any

import numpy as np


class FollowVelocity:
    def act(self, observation: Any) -> Any:
        velocity = float(observation[1])
        return np.array([1.0 if velocity > 0 else -1.0], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return FollowVelocity()
