"""Heuristic Policy for ``robotics/adroit-door`` and ``robotics/adroit-relocate``: hold one fixed posture.

Adroit's actions are joint position targets in [-1, 1] (0 = the middle of each joint's range, which the zero-action
baseline holds). Its dense reward pays for bringing the palm near the object (the door handle, the ball), so a
posture that reaches toward where the object usually is already earns more than the middle posture. POSTURES holds,
per task, the few action components that differ from 0; they were found by coordinate search over constant actions
(each component in turn set to -1, -0.5, 0.5 or 1, kept when the mean return of three training Episodes rose). The
hand never grasps or opens anything: this is a starting point, not a solution.

Door: the arm's translation (0), its up-down and left-right rotations (1, 2), its roll (3) and the wrist's flexion
(5). Relocate: the arm's x, y, z translations (0-2), its three rotations (3-5) and the wrist (6).
"""

from typing import Any

import numpy as np

POSTURES = {
    "AdroitHandDoor-v1": {0: -1.0, 1: -1.0, 2: 0.5, 3: 0.5, 5: 1.0},
    "AdroitHandRelocate-v1": {0: -1.0, 1: 1.0, 2: -1.0, 3: -1.0, 4: -1.0, 5: -1.0, 6: -1.0},
}


class Posture:
    def __init__(self, action: Any) -> None:
        self.action = action

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    action = np.zeros(context.action_space.shape, dtype=context.action_space.dtype)
    for index, value in POSTURES.get(context.environment_parameters.get("gymnasium_id"), {}).items():
        action[index] = value
    return Posture(action)
