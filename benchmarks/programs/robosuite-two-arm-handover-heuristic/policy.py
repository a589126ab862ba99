"""Heuristic Policy of ``robosuite/two-arm-handover``: robot0 turns its open gripper across the hammer's handle,
grasps it on one side of its middle, lifts it and brings it over the middle of the table; robot1 then grasps the
handle on the other side of its middle; robot0 lets go and moves up out of the way while robot1 holds the hammer.

Everything comes from the observation through ``context.metadata``: each hand's position and orientation
(``robot<i>_eef_pos``, ``robot<i>_eef_quat`` x y z w) from ``proprioception``; the handle's centre
(``handle_xpos``) and the hammer's orientation (``hammer_quat``, x y z w: the handle runs along the hammer's own z
axis) from ``objects``. The arms stand ``opposed`` and take position deltas in their own base frames: robot0 faces
+y, robot1 faces -y (:data:`BASE_YAW`); rotation about the vertical is the same in both frames.
"""

import math
from typing import Any

import numpy as np

GAIN = 12.0
YAW_GAIN = 2.0
BASE_YAW = (math.pi / 2, -math.pi / 2)  # each arm's base frame, measured from the world's x axis
GRIP = (-0.05, 0.05)  # where each arm grasps: metres from the handle's centre along its axis
HOVER = 0.06
CLOSE_STEPS = 12
DESCEND_STEPS = 40
MEET = np.array([0.0, -0.05, 1.0])  # where robot0 brings the handle's centre
UP = 0.15  # robot0 moves this far up after letting go


def _axis(quat: Any) -> Any:
    """The hammer's own z axis in the world (the handle's direction)."""
    x, y, z, w = (float(v) for v in quat)
    return np.array([2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)])


def _yaw(quat: Any) -> float:
    x, y, z, w = (float(v) for v in quat)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _wrap(angle: float, period: float) -> float:
    return (angle + period / 2) % period - period / 2


class Arm:
    """One arm: move (and turn) its hand to targets in the world frame, in its own base frame."""

    def __init__(self, metadata: Any, i: int) -> None:
        proprio = metadata["proprioception_fields"]
        self.eef = slice(*proprio[f"robot{i}_eef_pos"])
        self.quat = slice(*proprio[f"robot{i}_eef_quat"])
        c, s = math.cos(BASE_YAW[i]), math.sin(BASE_YAW[i])
        self.to_base = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
        self.phase = "approach"
        self.count = 0

    def position(self, observation: Any) -> Any:
        return observation["proprioception"][self.eef]

    def move(self, observation: Any, target: Any, gripper: float, yaw: float | None = None) -> Any:
        eef = self.position(observation)
        out = np.zeros(7, dtype=np.float64)
        out[:3] = np.clip(GAIN * (self.to_base @ (target - eef)), -1.0, 1.0)
        if yaw is not None:
            out[5] = float(np.clip(YAW_GAIN * self.yaw_error(observation, yaw), -1.0, 1.0))
        out[6] = gripper
        return out

    def yaw_error(self, observation: Any, yaw: float) -> float:
        return _wrap(yaw - _yaw(observation["proprioception"][self.quat]), math.pi)

    def grasp(self, observation: Any, point: Any, yaw: float) -> Any:
        """Approach above ``point``, descend, close; then ``phase`` is ``held``."""
        eef = self.position(observation)
        if self.phase == "approach":
            above = point + np.array([0.0, 0.0, HOVER])
            near = np.linalg.norm((above - eef)[:2]) < 0.01 and abs(above[2] - eef[2]) < 0.02
            if near and abs(self.yaw_error(observation, yaw)) < 0.05:
                self.phase = "descend"
            return self.move(observation, above, -1.0, yaw)
        if self.phase == "descend":
            self.count += 1
            if np.linalg.norm(point - eef) < 0.01 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
            return self.move(observation, point, -1.0, yaw)
        self.count += 1
        if self.count >= CLOSE_STEPS:
            self.phase = "held"
        return self.move(observation, eef, 1.0)


class Handover:
    def __init__(self, metadata: Any) -> None:
        objects = metadata["object_fields"]
        self.handle = slice(*objects["handle_xpos"])
        self.hammer_quat = slice(*objects["hammer_quat"])
        self.arms = (Arm(metadata, 0), Arm(metadata, 1))
        self.stage = "pick"
        self.count = 0
        self.release_height = 0.0

    def act(self, observation: Any) -> Any:
        handle = observation["objects"][self.handle]
        axis = _axis(observation["objects"][self.hammer_quat])
        bar_yaw = math.atan2(axis[1], axis[0])  # each gripper's x axis along the handle: the fingers close across it
        giver, taker = self.arms
        points = [handle + g * axis for g in GRIP]
        wait = taker.move(observation, taker.position(observation), -1.0)
        if self.stage == "pick":
            first = giver.grasp(observation, points[0], bar_yaw)
            if giver.phase == "held":
                self.stage = "bring"
            return np.concatenate([first, wait])
        if self.stage == "bring":
            offset = giver.position(observation) - handle  # keep the grasp: move the handle, not the hand
            first = giver.move(observation, MEET + offset, 1.0)
            if np.linalg.norm(MEET - handle) < 0.02:
                self.stage = "take"
            return np.concatenate([first, wait])
        offset = giver.position(observation) - handle
        hold = giver.move(observation, MEET + offset, 1.0)
        if self.stage == "take":
            second = taker.grasp(observation, points[1], bar_yaw)
            if taker.phase == "held":
                self.stage, self.count = "release", 0
            return np.concatenate([hold, second])
        self.count += 1
        keep = taker.move(observation, taker.position(observation), 1.0)
        if self.count <= CLOSE_STEPS:
            return np.concatenate([giver.move(observation, giver.position(observation), -1.0), keep])
        if self.count == CLOSE_STEPS + 1:
            self.release_height = float(giver.position(observation)[2])
        up = giver.position(observation).copy()
        up[2] = self.release_height + UP
        return np.concatenate([giver.move(observation, up, -1.0), keep])


def make_policy(context: Any) -> Any:
    return Handover(context.metadata)
