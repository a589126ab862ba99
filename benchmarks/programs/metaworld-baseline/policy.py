"""Baseline Policy of every ``metaworld/*`` Benchmark: the zero action (the hand stays put, the gripper relaxed).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (``task`` for one task; ``collection`` and ``tasks`` for MT10 / MT50) and ``policy_seed``
(use it for all randomness). The observation is 39 float64 numbers (in MT10 / MT50 a dict: ``state``, the 39
numbers, and ``task``, a one-hot naming the Episode's task). Actions are 4 floats in [-1, 1] (end-effector dx, dy,
dz; gripper); values outside are rejected (the Episode fails), never clipped: clip in the Policy.
"""

from typing import Any

import numpy as np


class ZeroAction:
    def __init__(self) -> None:
        self.action = np.zeros(4, dtype=np.float64)

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return ZeroAction()
