"""Baseline Policy of ``ale/tetris``: always NOOP (action 0); the pieces fall straight down and stack up.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
"""

from typing import Any


class Noop:
    def act(self, observation: Any) -> int:
        return 0


def make_policy(context: Any) -> Any:
    return Noop()
