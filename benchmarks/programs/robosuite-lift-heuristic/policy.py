"""Heuristic Policy of ``robosuite/lift``: move the open gripper above the cube, descend onto it, close the gripper,
then lift straight up.

The positions come from the observation through ``context.metadata``: the end effector's position is the
``robot0_eef_pos`` field of ``proprioception`` and the cube's the ``cube_pos`` field of ``objects``. The OSC_POSE
controller takes position deltas (scaled to at most 5 cm per step), so a proportional step ``GAIN * error``,
clipped to [-1, 1], moves the hand towards a target; the rotation deltas stay 0 (the gripper keeps pointing down).
"""

from typing import Any

import numpy as np

GAIN = 12.0
HOVER = 0.08  # metres above the cube before descending
GRASP_DEPTH = 0.0  # target height offset from the cube's centre when grasping
CLOSE_STEPS = 12  # steps spent closing the gripper before lifting
LIFT = 0.25  # metres to lift above the grasp


class LiftCube:
    def __init__(self, metadata: Any) -> None:
        self.eef = slice(*metadata["proprioception_fields"]["robot0_eef_pos"])
        self.cube = slice(*metadata["object_fields"]["cube_pos"])
        self.phase = "approach"
        self.closing = 0
        self.grasp_height = 0.0

    def _move(self, eef: Any, target: Any, gripper: float) -> Any:
        action = np.zeros(7, dtype=np.float64)
        action[:3] = np.clip(GAIN * (target - eef), -1.0, 1.0)
        action[6] = gripper
        return action

    def act(self, observation: Any) -> Any:
        eef = observation["proprioception"][self.eef]
        cube = observation["objects"][self.cube]
        if self.phase == "approach":
            above = cube + np.array([0.0, 0.0, HOVER])
            if np.linalg.norm((above - eef)[:2]) < 0.01 and abs(above[2] - eef[2]) < 0.02:
                self.phase = "descend"
            return self._move(eef, above, -1.0)
        if self.phase == "descend":
            target = cube + np.array([0.0, 0.0, GRASP_DEPTH])
            if np.linalg.norm(target - eef) < 0.01:
                self.phase = "close"
            return self._move(eef, target, -1.0)
        if self.phase == "close":
            self.closing += 1
            if self.closing >= CLOSE_STEPS:
                self.phase = "lift"
                self.grasp_height = float(eef[2])
            return self._move(eef, eef, 1.0)
        target = np.array([eef[0], eef[1], self.grasp_height + LIFT])
        return self._move(eef, target, 1.0)


def make_policy(context: Any) -> Any:
    return LiftCube(context.metadata)
