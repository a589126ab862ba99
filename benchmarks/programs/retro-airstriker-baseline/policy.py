"""Baseline Policy of ``retro/airstriker``: presses no button (the ship never fires nor moves, and scores nothing).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata`` (``buttons``: the button
of each action position), ``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for
all randomness). The action is a list of 12 zeros and ones, one per Genesis button.
"""

from typing import Any


class Noop:
    def act(self, observation: Any) -> list[int]:
        return [0] * 12


def make_policy(context: Any) -> Any:
    return Noop()
