"""Baseline Policy of every ``mujoco/*`` task: the zero action (no torque or force) on every step, sized by the
action space.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
Actions outside the bounds are rejected (the Episode fails), never clipped: clip in the Policy.
"""

from typing import Any

import numpy as np


class ZeroAction:
    def __init__(self, shape: Any) -> None:
        self.action = np.zeros(shape, dtype=np.float32)

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return ZeroAction(context.action_space.shape)
