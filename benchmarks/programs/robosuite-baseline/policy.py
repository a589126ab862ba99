"""Baseline Policy of every ``robosuite/*`` environment: the zero action on every step (the arms hold their pose, the
grippers stay as they are), sized by the action space.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata`` (``proprioception_fields``
and ``object_fields``: where each named field lies in the two observation vectors), ``environment_parameters``
(``env``, ``robots``, ``max_episode_steps``, ...) and ``policy_seed`` (use it for all randomness). The observation
is a dict of two float64 numpy vectors, ``proprioception`` and ``objects``. Actions are float vectors in [-1, 1]
(per arm: dx, dy, dz, three rotation deltas and, with a gripper, -1 open / 1 close); values outside are rejected
(the Episode fails), never clipped: clip in the Policy.
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
