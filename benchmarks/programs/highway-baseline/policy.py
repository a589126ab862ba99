"""Baseline Policy for the ``highway/*`` Benchmarks: the neutral action on every step.

Discrete meta-actions: 1 = IDLE (keep lane and speed; for ``highway/intersection``, whose actions are 0 SLOWER,
1 IDLE, 2 FASTER, it is IDLE too). Continuous actions (``parking``, ``racetrack``, ``lane-keeping``): all zeros
(no acceleration, no steering).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (the public Benchmark parameters, including the full highway-env ``config``) and
``policy_seed``. Actions outside the action space are rejected (the Episode fails), never clipped.
"""

from typing import Any

import numpy as np


class Neutral:
    def __init__(self, action: Any) -> None:
        self.action = action

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    space = context.action_space
    if hasattr(space, "n"):
        return Neutral(1)
    return Neutral(np.zeros(space.shape, dtype=np.float32))
