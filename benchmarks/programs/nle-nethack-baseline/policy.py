"""Baseline Policy of ``nle/nethack-score``: a uniformly random action each step (seeded by ``policy_seed``).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata`` (``actions``: the name of
each action index; ``blstats``: the name of each bottom-line stat), ``environment_parameters`` and ``policy_seed``
(use it for all randomness). The observation is a dict of NLE arrays (``chars``, ``blstats``, ``message``, ...).
"""

import random
from typing import Any


class Random:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def act(self, observation: Any) -> int:
        return self._rng.randrange(23)


def make_policy(context: Any) -> Any:
    return Random(getattr(context, "policy_seed", 0))
