"""Baseline Policy for the ``pendulum`` Benchmark: a uniformly random action within the bounds.

Observation: [cos theta, sin theta, angular velocity] with theta = 0 upright; action: [torque] in [-2, 2].

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
Actions outside the bounds are rejected (the Episode fails), never clipped: clip in the Policy.
"""

from typing import Any

import numpy as np


class RandomPolicy:
    def __init__(self, low: Any, high: Any, seed: int) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Any) -> Any:
        return self.rng.uniform(self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    space = context.action_space
    return RandomPolicy(space.low, space.high, context.policy_seed)
