"""Heuristic Policy of ``robosuite/two-arm-peg-in-hole``: robot1 holds the plate with the hole still; robot0, which
holds the peg, turns it until it points along the hole's axis, then moves it towards a point behind the hole on that
axis and, once on the axis, towards the hole. It earns the dense reward's alignment and reaching terms; it does not
get the peg through: the peg meets the plate's edge and pushes the plate away (robot1 yields), so it never succeeds.

Everything comes from the observation through ``context.metadata``: ``peg_quat`` and ``hole_quat`` (x y z w: the
peg points along its own z axis, the hole's axis is the plate's z axis and its centre lies 0.1 m along the plate's
x axis from ``hole_pos``) and ``peg_to_hole`` (``hole_pos`` minus the peg, metres). The arms stand ``opposed`` and
take deltas (positions and axis-angle rotations) in their own base frames: robot0 faces +y (:data:`BASE_YAW`).
"""

import math
from typing import Any

import numpy as np

GAIN = 10.0
TURN_GAIN = 2.5  # action units per radian of misalignment (1 unit turns 0.5 rad in one step)
BASE_YAW = math.pi / 2  # robot0's base frame, from the world's x axis
CENTRE = 0.1  # the hole's centre: this far along the plate's x axis from hole_pos
ALIGNED = 0.25  # radians: move onto the axis once the peg points along it to within this
BACK = 0.3  # first aim this far back from the centre along the axis, then at the centre
ON_AXIS = 0.02  # metres off the axis that count as on it


def _matrix(quat: Any) -> Any:
    x, y, z, w = (float(v) for v in quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


class PegInHole:
    def __init__(self, metadata: Any) -> None:
        objects = metadata["object_fields"]
        self.peg_to_hole = slice(*objects["peg_to_hole"])
        self.peg_quat = slice(*objects["peg_quat"])
        self.hole_quat = slice(*objects["hole_quat"])
        c, s = math.cos(BASE_YAW), math.sin(BASE_YAW)
        self.to_base = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])

    def act(self, observation: Any) -> Any:
        objects = observation["objects"]
        peg = _matrix(objects[self.peg_quat])[:, 2]
        hole = _matrix(objects[self.hole_quat])
        axis = hole[:, 2] if float(hole[:, 2] @ peg) >= 0 else -hole[:, 2]  # the hole's axis, as the peg points
        turn = np.cross(peg, axis)  # the rotation taking the peg's direction onto the axis (world frame)
        angle = math.asin(min(float(np.linalg.norm(turn)), 1.0))
        to_centre = objects[self.peg_to_hole] + CENTRE * hole[:, 0]
        if angle > ALIGNED:
            move = np.zeros(3)
        else:
            depth = float(to_centre @ axis)  # how far the centre lies ahead of the peg along the axis
            lateral = to_centre - depth * axis  # the peg's offset from the axis
            move = to_centre - BACK * axis if np.linalg.norm(lateral) > ON_AXIS else to_centre
        action = np.zeros(12, dtype=np.float64)
        action[:3] = np.clip(GAIN * (self.to_base @ move), -1.0, 1.0)
        if angle > 1e-6:
            rotation = turn / np.linalg.norm(turn) * angle
            action[3:6] = np.clip(TURN_GAIN * (self.to_base @ rotation), -1.0, 1.0)
        return action


def make_policy(context: Any) -> Any:
    return PegInHole(context.metadata)
