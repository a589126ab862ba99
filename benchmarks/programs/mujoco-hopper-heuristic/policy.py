"""Heuristic Policy for ``mujoco/hopper``: linear state feedback, ``action = clip(W @ observation)``.

Observation: 11 floats (torso z, torso angle, thigh, leg, foot angles, then x, z, angular and 3 joint velocities).
Action: joint torques in [-1, 1]. ``W`` (3 x 11) was found offline by basic random search (ARS: antithetic
perturbations of ``W`` from zero, 8 directions per update) on Hopper-v5 with seeds unrelated to any Benchmark pool.
It keeps the body upright far longer than the zero action does (it mostly balances; it barely walks). It reads the
default observation layout (``exclude_current_positions_from_observation`` true) and drops the leading x position
when that setting is false.
"""

from typing import Any

import numpy as np

W = np.array(
    [
        [-0.02302, -0.21444, -0.07304, 0.01687, -0.07472, -0.08444, 0.18385, -0.01046, -0.09745, -0.31788, -0.15233],
        [0.13514, -0.03819, -0.12050, -0.14319, -0.09670, 0.02032, -0.12390, 0.09291, 0.04861, 0.03301, 0.08411],
        [0.04383, -0.00720, 0.21788, 0.07074, -0.15189, -0.07886, -0.10536, 0.06324, 0.09603, -0.00400, -0.16744],
    ]
)


class LinearFeedback:
    def __init__(self, low: Any, high: Any, offset: int) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.offset = offset

    def act(self, observation: Any) -> Any:
        state = np.asarray(observation, dtype=np.float64)[self.offset :]
        return np.clip(W @ state, self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    excluded = bool(context.environment_parameters.get("exclude_current_positions_from_observation", True))
    return LinearFeedback(context.action_space.low, context.action_space.high, 0 if excluded else 1)
