"""Baseline Policy for the ``mountain-car`` Benchmark: a uniformly random action.

Observation: [position, velocity]; actions 0 (left) / 1 (none) / 2 (right).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
"""

from typing import Any

import numpy as np


class RandomPolicy:
    def __init__(self, n: int, start: int, seed: int) -> None:
        self.n = n
        self.start = start
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Any) -> Any:
        return self.start + int(self.rng.integers(self.n))


def make_policy(context: Any) -> Any:
    space = context.action_space
    return RandomPolicy(int(space.n), int(space.start), context.policy_seed)
