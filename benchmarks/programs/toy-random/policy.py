"""Baseline Policy for the toy Benchmarks: a uniformly random action from whatever the action space is.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
"""

from typing import Any


class RandomPolicy:
    def __init__(self, space: Any, seed: int) -> None:
        self.space = space
        self.space.seed(seed)

    def act(self, observation: Any) -> Any:
        return self.space.sample()


def make_policy(context: Any) -> Any:
    return RandomPolicy(context.action_space, context.policy_seed)
