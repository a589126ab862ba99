"""Baseline Policy of every ``dm-control/*`` task: the zero action (no force or torque) on every step, sized by the
action space.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters: ``domain``, ``task``, ``control_timestep``, ...) and
``policy_seed`` (use it for all randomness). The observation is a dict of float64 numpy arrays (its fields are in
the Benchmark's description). Actions are float vectors in [-1, 1]; values outside are rejected (the Episode fails),
never clipped: clip in the Policy.
"""

from typing import Any

import numpy as np


class ZeroAction:
    def __init__(self, shape: Any) -> None:
        self.action = np.zeros(shape, dtype=np.float64)

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return ZeroAction(context.action_space.shape)
