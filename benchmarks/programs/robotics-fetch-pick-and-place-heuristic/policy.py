"""Heuristic Policy for ``robotics/fetch-pick-and-place``: a grasp in four phases, a state machine on positions.

Observation: a dict; ``observation[0:3]`` gripper position, ``[3:6]`` block position, ``desired_goal`` the target
(metres). Action: x, y, z displacements in [-1, 1] (1 = 5 cm per step) and the fingers (+1 open, -1 close).

1. approach: fingers open, go to a point ABOVE metres over the block;
2. descend: fingers open, go down onto the block's centre;
3. grasp: close the fingers for GRASP_STEPS steps without moving;
4. carry: fingers closed, take the block to the target and hold it there.
If the block is left behind while carrying (it slipped), start again at 1. Each move is a proportional step of GAIN
times the remaining error, clipped to the bounds.
"""

from typing import Any

import numpy as np

GAIN = 10.0
ABOVE = 0.05
CLOSE = 0.01
GRASP_STEPS = 4
SLIPPED = 0.03


class PickAndPlace:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.phase = "approach"
        self.waited = 0

    def act(self, observation: Any) -> Any:
        state = np.asarray(observation["observation"], dtype=np.float64)
        gripper, block = state[0:3], state[3:6]
        goal = np.asarray(observation["desired_goal"], dtype=np.float64)
        if self.phase == "carry" and np.linalg.norm(block - gripper) > SLIPPED:
            self.phase = "approach"
        if self.phase == "approach":
            target, fingers = block + np.array([0.0, 0.0, ABOVE]), 1.0
            if np.linalg.norm(target - gripper) < CLOSE:
                self.phase = "descend"
        if self.phase == "descend":
            target, fingers = block, 1.0
            if np.linalg.norm(target - gripper) < CLOSE:
                self.phase, self.waited = "grasp", 0
        if self.phase == "grasp":
            target, fingers = gripper, -1.0
            self.waited += 1
            if self.waited >= GRASP_STEPS:
                self.phase = "carry"
        if self.phase == "carry":
            target, fingers = goal, -1.0
        move = np.clip(GAIN * (target - gripper), -1.0, 1.0)
        return np.array([*move, fingers], dtype=self.dtype)


def make_policy(context: Any) -> Any:
    return PickAndPlace(context.action_space.dtype)
