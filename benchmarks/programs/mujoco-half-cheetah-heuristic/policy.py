"""Heuristic Policy for ``mujoco/half-cheetah``: an open-loop gait of one sine wave per joint.

Observation (17 floats): ignored. Action: 6 joint torques in [-1, 1] (back thigh, shin, foot, front thigh, shin,
foot). Joint ``j`` gets ``BIAS[j] + AMPLITUDE[j] * sin(2 pi t / PERIOD_STEPS + PHASE[j])`` at step ``t``, clipped to
the bounds. The numbers were found offline by a small random search over such gaits on HalfCheetah-v5 (two
Episodes per candidate, seeds unrelated to any Benchmark pool); the gait bounds forwards at roughly 1.5 m/s.
"""

import math
from typing import Any

import numpy as np

PERIOD_STEPS = 11.22
AMPLITUDE = np.array([0.516, 0.536, 0.231, 0.737, 0.654, 0.656])
PHASE = np.array([0.797, 1.148, -0.92, -3.799, 1.602, 0.987])
BIAS = np.array([-0.176, 0.202, -0.221, -0.248, -0.318, -0.177])


class SineGait:
    def __init__(self, low: Any, high: Any) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.t = 0

    def act(self, observation: Any) -> Any:
        angle = 2.0 * math.pi * self.t / PERIOD_STEPS
        self.t += 1
        return np.clip(BIAS + AMPLITUDE * np.sin(angle + PHASE), self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    return SineGait(context.action_space.low, context.action_space.high)
