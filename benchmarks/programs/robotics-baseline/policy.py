"""Baseline Policy of every ``robotics/*`` profile: the zero action on every step, sized by the action space.

Fetch keeps its gripper still, the maze's point mass and the Ant apply no force, the Adroit and Shadow hands hold
their middle joint targets and the Franka arm stays still, so this scores what doing nothing scores (a success only
when the goal happens to start reached).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
Actions outside [-1, 1] are rejected (the Episode fails), never clipped: clip in the Policy.
"""

from typing import Any

import numpy as np


class ZeroAction:
    def __init__(self, shape: Any, dtype: Any) -> None:
        self.action = np.zeros(shape, dtype=dtype)

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return ZeroAction(context.action_space.shape, context.action_space.dtype)
