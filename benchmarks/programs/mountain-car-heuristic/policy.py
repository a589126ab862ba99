"""Heuristic Policy for ``mountain-car``: push in the direction the car is already moving.

Accelerating along the velocity pumps energy into the swing between the hills until the car clears the right
hill; at rest (the start) it pushes left first, which builds a longer run-up.
"""

from typing import Any


class FollowVelocity:
    def act(self, observation: Any) -> Any:
        velocity = float(observation[1])
        return 2 if velocity > 0 else 0


def make_policy(context: Any) -> Any:
    return FollowVelocity()
