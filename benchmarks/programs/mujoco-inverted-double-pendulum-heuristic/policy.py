"""Heuristic Policy for ``mujoco/inverted-double-pendulum``: a linear-quadratic regulator around the upright poles.

Observation (9): [cart x, sin t1, sin t2, cos t1, cos t2, cart velocity, t1 velocity, t2 velocity, constraint
force] with t1 the lower pole's angle from upright and t2 the upper pole's angle relative to the lower one;
action: [force] in [-1, 1]. The gain ``K`` on the state (x, t1, t2, velocities) was computed offline by
linearising InvertedDoublePendulum-v5 about the upright rest state (one Environment step of ``frame_skip`` = 5
physics steps) and solving the discrete Riccati equation with state weights diag(1, 10, 10, 1, 1, 1) and control
weight 0.1. The force ``-K @ state`` is clipped to the bounds here, in the Policy, because the Environment rejects
out-of-range actions.
"""

import math
from typing import Any

import numpy as np

GAIN = np.array([0.08855133, 1.03338175, 4.57809067, 0.18205726, 0.63363053, 0.68704095])


class Regulator:
    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def act(self, observation: Any) -> Any:
        o = [float(v) for v in observation]
        state = np.array([o[0], math.atan2(o[1], o[3]), math.atan2(o[2], o[4]), o[5], o[6], o[7]])
        force = -float(GAIN @ state)
        return np.array([min(self.high, max(self.low, force))], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return Regulator(float(context.action_space.low[0]), float(context.action_space.high[0]))
