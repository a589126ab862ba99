"""Heuristic Policy for ``robotics/adroit-hammer``: lower the hand onto the hammer's handle, grip it, lift it.

Adroit's actions are joint position targets in [-1, 1] (0 = the middle of each joint's range, which the zero-action
baseline holds). The hammer lies on the table under the palm; upstream's dense reward pays +2 on every step both
the hammer and its head are more than 4 cm above the table, so holding it up is worth far more than anything the
middle posture earns. The script has three phases, by step count:

1. until GRIP: the arm's up-down rotation (actuator 0, A_ARRx) at LOWER brings the open hand down onto the handle;
2. from GRIP: the four fingers' flexion actuators (FINGERS: J2, J1, J0 of the first, middle, ring and little
   finger) go to 1 (fully curled) and the thumb to THUMB, closing the hand around the handle;
3. from LIFT: the arm rotates back up to RAISE and holds the hammer there until the end.

LOWER, RAISE and the thumb posture were picked from a small grid on three training Episodes (the closing time and
the lift height matter little). The hammer is never swung: the nail is not driven in.
"""

from typing import Any

import numpy as np

LOWER = 0.8
RAISE = -0.5
GRIP = 20
LIFT = 35
FINGERS = [5, 6, 7, 9, 10, 11, 13, 14, 15, 18, 19, 20]
THUMB = {21: 0.5, 22: 1.0, 23: 0.0, 24: 0.5, 25: 0.5}  # A_THJ4 .. A_THJ0


class GripAndLift:
    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype
        self.steps = 0

    def act(self, observation: Any) -> Any:
        action = np.zeros(self.shape, dtype=self.dtype)
        action[0] = LOWER if self.steps < LIFT else RAISE
        if self.steps >= GRIP:
            action[FINGERS] = 1.0
            for index, value in THUMB.items():
                action[index] = value
        self.steps += 1
        return action


def make_policy(context: Any) -> Any:
    return GripAndLift(context.action_space.shape, context.action_space.dtype)
