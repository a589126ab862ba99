"""Heuristic Policy of ``robosuite/door``: move the open gripper above the handle, descend onto it, close, press
the handle down (it turns on its latch), then pull the door towards the robot (+y) until it has swung open.

Everything comes from the observation through ``context.metadata``: ``handle_to_eef_pos`` (the handle minus the
hand, in metres), ``handle_qpos`` (how far the handle turned) and ``hinge_qpos`` (how far the door swung open, in
radians; upstream counts the door open above 0.3). Position deltas are ``GAIN * error`` clipped to [-1, 1]; the
rotation deltas stay 0 (the gripper keeps pointing down, its fingers closing across the handle bar).
"""

from typing import Any

import numpy as np

GAIN = 12.0
HOVER = 0.06  # metres above the handle before descending
GRIP_DEPTH = 0.0  # grasp this far below the handle's reference point
CLOSE_STEPS = 10
DESCEND_STEPS = 40
TURNED = 1.3  # radians of handle rotation that unlatch the door
TURN_STEPS = 90
OPEN = 0.33  # radians of door swing to hold at (upstream counts the door open above 0.3)
PULL_SPEED = 1.0  # action units while pulling


class Door:
    def __init__(self, metadata: Any) -> None:
        objects = metadata["object_fields"]
        self.to_handle = slice(*objects["handle_to_eef_pos"])
        self.handle_qpos = slice(*objects["handle_qpos"])
        self.hinge_qpos = slice(*objects["hinge_qpos"])
        self.phase = "approach"
        self.count = 0
        self.integral = np.zeros(3)

    def _action(self, delta: Any, gripper: float) -> Any:
        action = np.zeros(7, dtype=np.float64)
        action[:3] = np.clip(delta, -1.0, 1.0)
        action[6] = gripper
        return action

    def act(self, observation: Any) -> Any:
        objects = observation["objects"]
        to_handle = objects[self.to_handle]
        handle = abs(float(objects[self.handle_qpos][0]))
        grip = to_handle - np.array([0.0, 0.0, GRIP_DEPTH])
        if self.phase == "approach":
            above = grip + np.array([0.0, 0.0, HOVER])
            self.integral = np.clip(self.integral + above, -0.5, 0.5)
            if np.linalg.norm(above[:2]) < 0.015 and abs(above[2]) < 0.02:
                self.phase = "descend"
            return self._action(GAIN * above + 0.5 * self.integral, -1.0)
        if self.phase == "descend":
            self.count += 1
            if np.linalg.norm(grip) < 0.01 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
            return self._action(GAIN * grip, -1.0)
        if self.phase == "close":
            self.count += 1
            if self.count >= CLOSE_STEPS:
                self.phase, self.count = "turn", 0
            return self._action(np.zeros(3), 1.0)
        if self.phase == "turn":
            self.count += 1
            if handle > TURNED or self.count >= TURN_STEPS:
                self.phase, self.count = "pull", 0
            return self._action(np.array([0.0, 0.0, -0.5]), 1.0)
        hinge = float(objects[self.hinge_qpos][0])
        if hinge > OPEN:  # open: hold the handle where it is
            return self._action(np.zeros(3), 1.0)
        tangent = np.array([-np.sin(hinge), np.cos(hinge), 0.0])  # the handle's way round the hinge, +y when shut
        return self._action(PULL_SPEED * tangent + np.array([0.0, 0.0, -0.3]), 1.0)


def make_policy(context: Any) -> Any:
    return Door(context.metadata)
