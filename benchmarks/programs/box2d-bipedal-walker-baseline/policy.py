"""Baseline Policy for ``box2d/bipedal-walker`` and ``box2d/bipedal-walker-hardcore``: zero torque on every joint.

The walker's legs fold and its hull drops to the ground within a few seconds (-100): the floor any Policy should
beat.

Observation (24 floats): hull angle, hull angular velocity, horizontal and vertical speed; per leg (first, second)
hip angle, hip speed, knee angle, knee speed, ground contact; 10 lidar ranges. Action: 4 floats in [-1, 1]
(hip 1, knee 1, hip 2, knee 2 torques); out-of-range actions are rejected, never clipped.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
"""

from typing import Any

import numpy as np


class ZeroTorque:
    def act(self, observation: Any) -> Any:
        return np.zeros(4, dtype=np.float32)


def make_policy(context: Any) -> Any:
    return ZeroTorque()
