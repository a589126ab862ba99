"""Heuristic Policy of ``robosuite/two-arm-lift``: each arm turns its open gripper across its handle of the pot,
moves above it, descends and closes; once both hold, both lift together, keeping the pot level.

Everything comes from the observation through ``context.metadata``: each hand's position and orientation
(``robot<i>_eef_pos``, ``robot<i>_eef_quat`` x y z w) from ``proprioception``, each handle's position
(``handle<i>_xpos``) from ``objects``. A handle's grip bar runs across the line joining the two handles, so each
gripper turns to point its x axis along that bar. The arms stand ``opposed`` on either side of the table and take
their position deltas in their own base frame: robot0 faces +y (its x is the world's +y) and robot1 faces -y, so a
world-frame error is turned by :data:`BASE_YAW` before the proportional step ``GAIN * error`` (clipped to
[-1, 1]); rotation about the vertical is the same in both frames.
"""

import math
from typing import Any

import numpy as np

GAIN = 12.0
YAW_GAIN = 2.0
BASE_YAW = (math.pi / 2, -math.pi / 2)  # each arm's base frame, measured from the world's x axis
HOVER = 0.06  # metres above the handle before descending
CLOSE_STEPS = 12
DESCEND_STEPS = 40
LIFT = 0.25  # metres to lift the pot


def _yaw(quat: Any) -> float:
    x, y, z, w = (float(v) for v in quat)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _wrap(angle: float, period: float) -> float:
    return (angle + period / 2) % period - period / 2


class Arm:
    def __init__(self, metadata: Any, i: int) -> None:
        proprio, objects = metadata["proprioception_fields"], metadata["object_fields"]
        self.eef = slice(*proprio[f"robot{i}_eef_pos"])
        self.quat = slice(*proprio[f"robot{i}_eef_quat"])
        self.handle = slice(*objects[f"handle{i}_xpos"])
        c, s = math.cos(BASE_YAW[i]), math.sin(BASE_YAW[i])
        self.to_base = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # world -> base (transpose of R)
        self.phase = "approach"
        self.count = 0
        self.grasp_height = 0.0

    def action(self, observation: Any, bar_yaw: float, lift: bool) -> Any:
        eef = observation["proprioception"][self.eef]
        handle = observation["objects"][self.handle]
        yaw_error = 0.0
        if self.phase in ("approach", "descend"):
            yaw_error = _wrap(bar_yaw - _yaw(observation["proprioception"][self.quat]), math.pi)
        gripper = -1.0
        if self.phase == "approach":
            target = handle + np.array([0.0, 0.0, HOVER])
            if np.linalg.norm((target - eef)[:2]) < 0.01 and abs(target[2] - eef[2]) < 0.02 and abs(yaw_error) < 0.05:
                self.phase = "descend"
        elif self.phase == "descend":
            target = handle
            self.count += 1
            if np.linalg.norm(handle - eef) < 0.01 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
        elif self.phase == "close":
            target, gripper = eef, 1.0
            self.count += 1
            if self.count >= CLOSE_STEPS:
                self.phase, self.grasp_height = "hold", float(eef[2])
        else:
            gripper = 1.0
            target = np.array([eef[0], eef[1], self.grasp_height + (LIFT if lift else 0.0)])
        out = np.zeros(7, dtype=np.float64)
        out[:3] = np.clip(GAIN * (self.to_base @ (target - eef)), -1.0, 1.0)
        out[5] = float(np.clip(YAW_GAIN * yaw_error, -1.0, 1.0))
        out[6] = gripper
        return out


class TwoArmLift:
    def __init__(self, metadata: Any) -> None:
        self.arms = (Arm(metadata, 0), Arm(metadata, 1))
        objects = metadata["object_fields"]
        self.handles = (slice(*objects["handle0_xpos"]), slice(*objects["handle1_xpos"]))

    def act(self, observation: Any) -> Any:
        across = observation["objects"][self.handles[1]] - observation["objects"][self.handles[0]]
        bar_yaw = math.atan2(across[1], across[0]) + math.pi / 2  # the bars run across the line between them
        lift = all(arm.phase == "hold" for arm in self.arms)
        return np.concatenate([arm.action(observation, bar_yaw, lift) for arm in self.arms])


def make_policy(context: Any) -> Any:
    return TwoArmLift(context.metadata)
