"""Heuristic Policy for ``robotics/fetch-push``: get behind the block, then push it along the line to the target.

Observation: a dict; ``observation[0:3]`` gripper position, ``[3:6]`` block position, ``desired_goal`` the target
(metres). Action: x, y, z displacements in [-1, 1] (1 = 5 cm per step); the fingers are locked in this task.

The push direction d is the horizontal unit vector from the block to the target. The Policy goes to a point BEHIND
metres behind the block along d, first at a safe height ABOVE over it (so it never knocks the block on the way),
then down to the block's height; from there it pushes, aiming at the target plus the block's half size along d, so
the block (not the gripper) stops on the target. If the block leaves the line (sideways error over OFF_LINE) or the
gripper loses contact, it goes back behind the block, rising above it first. Moves are proportional steps of
GAIN (PUSH_GAIN while pushing: slower, so the block does not slide past) times the error.
"""

from typing import Any

import numpy as np

GAIN = 10.0
PUSH_GAIN = 4.0
BEHIND = 0.06
ABOVE = 0.06
CLOSE = 0.012
OFF_LINE = 0.02
HALF = 0.025
DONE = 0.02


class Push:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.phase = "above"

    def act(self, observation: Any) -> Any:
        state = np.asarray(observation["observation"], dtype=np.float64)
        gripper, block = state[0:3], state[3:6]
        goal = np.asarray(observation["desired_goal"], dtype=np.float64)
        to_goal = goal[:2] - block[:2]
        distance = float(np.linalg.norm(to_goal))
        if distance < DONE:
            target = gripper.copy()
            target[2] = block[2] + ABOVE  # lift off and leave the block where it is
            return self._move(target, gripper)
        d = np.array([*(to_goal / distance), 0.0])
        behind = block - BEHIND * d
        behind[2] = block[2]
        if self.phase == "push":
            offset = gripper[:2] - block[:2]
            sideways = abs(float(offset[0] * d[1] - offset[1] * d[0]))
            if sideways > OFF_LINE or float(np.linalg.norm(offset)) > BEHIND + 0.02:
                self.phase = "above"
        if self.phase == "above":
            target = behind + np.array([0.0, 0.0, ABOVE])
            if gripper[2] < block[2] + ABOVE - CLOSE:  # rise first, then travel: never sweep through the block
                target = np.array([gripper[0], gripper[1], target[2]])
            elif np.linalg.norm(target - gripper) < CLOSE:
                self.phase = "down"
        if self.phase == "down":
            target = behind
            if np.linalg.norm(target - gripper) < CLOSE:
                self.phase = "push"
        if self.phase == "push":
            target = goal - HALF * d
            target[2] = block[2]
            return self._move(target, gripper, PUSH_GAIN)
        return self._move(target, gripper)

    def _move(self, target: Any, gripper: Any, gain: float = GAIN) -> Any:
        move = np.clip(gain * (target - gripper), -1.0, 1.0)
        return np.array([*move, 0.0], dtype=self.dtype)


def make_policy(context: Any) -> Any:
    return Push(context.action_space.dtype)
