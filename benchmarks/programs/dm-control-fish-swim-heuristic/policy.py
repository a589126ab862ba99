"""Heuristic Policy for ``dm-control/fish-swim``: beat the tail, steer with its bias, and pitch the fins toward the
target.

Observation: ``joint_angles``, ``upright`` (cosine of the fish's tilt), ``target`` = the target relative to the
mouth in the mouth's frame (m: [sideways, down, forward]), ``velocity``; action: five position commands in [-1, 1]
(tail yaw, tail twist, fin flap, left fin pitch, right fin pitch). The tail swings ``TAIL * sin(2 pi FREQUENCY t)``
around a bias of ``YAW_GAIN`` times the target's bearing (its angle sideways from straight ahead), which turns the
fish toward it; the fins flap at the same frequency (``FLAP``, phase ``FLAP_PHASE``) and both pitch by a gain times
the target's elevation, steering up or down. The reward is mostly for the mouth being within a few centimetres of
the target (plus a little for staying upright), so the fish has to arrive; how close it gets varies much between
Episodes. The numbers came from a short random search (60 tries on four 1000-step Episodes).
"""

import math
from typing import Any

import numpy as np

FREQUENCY = 0.857
TAIL = 0.646
YAW_GAIN = 1.635
FLAP = 1.329
FLAP_PHASE = -0.052
LEFT_PITCH_GAIN = 0.314
RIGHT_PITCH_GAIN = 0.585


class FishSwim:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0

    def act(self, observation: Any) -> Any:
        sideways, down, forward = (float(v) for v in observation["target"])
        bearing = math.atan2(sideways, forward)
        elevation = math.atan2(-down, math.hypot(sideways, forward))
        phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep
        self.steps += 1
        action = [
            TAIL * math.sin(phase) + YAW_GAIN * bearing,
            0.0,
            FLAP * math.sin(phase + FLAP_PHASE),
            LEFT_PITCH_GAIN * elevation,
            RIGHT_PITCH_GAIN * elevation,
        ]
        return np.clip(np.array(action, dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return FishSwim(float(context.environment_parameters.get("control_timestep", 0.04)))
