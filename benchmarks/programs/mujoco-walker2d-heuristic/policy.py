"""Heuristic Policy for ``mujoco/walker2d``: linear state feedback, ``action = clip(W @ observation)``.

Observation: 17 floats (torso z, torso angle, 6 joint angles, then x, z, angular and 6 joint velocities). Action:
joint torques in [-1, 1]. ``W`` (6 x 17) was found offline by basic random search (ARS: antithetic perturbations of
``W`` from zero, 8 directions per update) on Walker2d-v5 with seeds unrelated to any Benchmark pool. It keeps the
body upright far longer than the zero action does (it mostly balances; it barely walks). It reads the default
observation layout (``exclude_current_positions_from_observation`` true) and drops the leading x position when that
setting is false.
"""

from typing import Any

import numpy as np

W = np.array(
    [
        [
            0.15002,
            -0.16543,
            0.09784,
            0.12573,
            -0.05789,
            0.14285,
            0.17745,
            -0.16933,
            -0.04212,
            -0.09978,
            0.04195,
            -0.12722,
            -0.07694,
            -0.00795,
            0.17121,
            0.01529,
            -0.07767,
        ],
        [
            0.07906,
            -0.02302,
            0.11825,
            0.04064,
            -0.15902,
            -0.17092,
            -0.10030,
            0.15318,
            0.11021,
            -0.07946,
            -0.03815,
            0.20701,
            0.02034,
            0.01207,
            0.13319,
            0.09087,
            -0.08276,
        ],
        [
            0.02679,
            -0.12607,
            -0.15526,
            0.00211,
            -0.00617,
            -0.14971,
            -0.36897,
            -0.05856,
            -0.15149,
            0.16761,
            -0.32543,
            0.08419,
            0.08496,
            -0.10724,
            0.04367,
            -0.01925,
            -0.00763,
        ],
        [
            0.25931,
            0.10287,
            0.14914,
            0.00485,
            0.12271,
            0.06746,
            -0.10645,
            -0.03802,
            -0.01976,
            0.19284,
            -0.19580,
            0.01935,
            -0.21338,
            -0.20399,
            -0.00474,
            0.00394,
            0.09734,
        ],
        [
            0.14095,
            0.17695,
            0.06946,
            -0.05846,
            -0.04040,
            -0.12473,
            0.01344,
            -0.29225,
            0.09815,
            0.04372,
            0.19692,
            0.01453,
            0.04432,
            -0.04454,
            -0.06101,
            -0.13055,
            0.07526,
        ],
        [
            -0.01210,
            0.08952,
            -0.09336,
            0.07448,
            0.14202,
            -0.06149,
            -0.26814,
            -0.01980,
            -0.10273,
            -0.04926,
            -0.23100,
            -0.05312,
            0.11605,
            0.07023,
            0.18904,
            -0.00069,
            -0.13697,
        ],
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
