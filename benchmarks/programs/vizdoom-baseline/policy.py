"""Baseline Policy of every ``vizdoom/*`` scenario: the no-op on every step (action 0; in ``deathmatch`` the no-op
button with zero deltas).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata`` (``actions`` names every
action index), ``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all
randomness).
"""

from typing import Any


class Noop:
    def __init__(self, hybrid: bool) -> None:
        self.action: Any = {"binary": 0, "continuous": [0.0, 0.0, 0.0]} if hybrid else 0

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return Noop(hybrid=hasattr(context.action_space, "spaces"))
