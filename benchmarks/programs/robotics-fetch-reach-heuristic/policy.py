"""Heuristic Policy for ``robotics/fetch-reach``: move the gripper straight towards the target and hold it there.

Observation: a dict; ``observation[0:3]`` is the gripper's position, ``desired_goal`` the target (metres). Action:
x, y, z displacements in [-1, 1] (1 = 5 cm per step) and the fingers (left at 0). A proportional step of GAIN times
the remaining error, clipped to the bounds, closes most of the gap each step without overshooting.
"""

from typing import Any

import numpy as np

GAIN = 10.0


class ReachTarget:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    def act(self, observation: Any) -> Any:
        gripper = np.asarray(observation["observation"][:3], dtype=np.float64)
        target = np.asarray(observation["desired_goal"], dtype=np.float64)
        move = np.clip(GAIN * (target - gripper), -1.0, 1.0)
        return np.array([*move, 0.0], dtype=self.dtype)


def make_policy(context: Any) -> Any:
    return ReachTarget(context.action_space.dtype)
