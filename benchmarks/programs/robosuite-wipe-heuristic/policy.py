"""Heuristic Policy of ``robosuite/wipe``: bring the wiping tool above the centre of the markings still on the
table, lower it until it touches, then press lightly while spiralling round that centre, out to how far the markings
spread.

Everything comes from the observation through ``context.metadata``: ``gripper_to_wipe_centroid`` (the centre of the
markings left minus the tool, metres), ``wipe_radius`` (how far they spread) and ``proportion_wiped``. The tool
presses by aiming :data:`PRESS` below the table top; the arm itself must never touch the table (the Episode ends
with a penalty), so the tool stays pointing down (no rotation) and the hand never aims lower than that.
"""

import math
from typing import Any

import numpy as np

GAIN = 10.0
HOVER = 0.04  # metres above the markings before lowering
PRESS = 0.02  # aim this far below the markings' centre while wiping
PERIOD = 40  # steps per circle round the centre
RINGS = 4  # circles per spiral
SPEED = 0.5  # the largest position delta while wiping (action units)
MIN_RADIUS, MAX_RADIUS = 0.02, 0.25


class Wipe:
    def __init__(self, metadata: Any) -> None:
        objects = metadata["object_fields"]
        self.to_centre = slice(*objects["gripper_to_wipe_centroid"])
        self.radius = slice(*objects["wipe_radius"])
        self.phase = "approach"
        self.step = 0

    def act(self, observation: Any) -> Any:
        objects = observation["objects"]
        to_centre = objects[self.to_centre]
        action = np.zeros(6, dtype=np.float64)
        if self.phase == "approach":
            error = to_centre + np.array([0.0, 0.0, HOVER])
            if np.linalg.norm(error) < 0.015:
                self.phase = "wipe"
            action[:3] = np.clip(GAIN * error, -1.0, 1.0)
            return action
        self.step += 1
        spread = float(np.clip(objects[self.radius][0], MIN_RADIUS, MAX_RADIUS))
        turn = (self.step // PERIOD) % RINGS  # a spiral: rings from the centre out to the spread, then again
        radius = spread * (turn + 1) / RINGS
        angle = 2.0 * math.pi * self.step / PERIOD
        circle = radius * np.array([math.cos(angle), math.sin(angle), 0.0])
        error = to_centre + circle - np.array([0.0, 0.0, PRESS])
        action[:3] = np.clip(GAIN * error, -SPEED, SPEED)
        return action


def make_policy(context: Any) -> Any:
    return Wipe(context.metadata)
