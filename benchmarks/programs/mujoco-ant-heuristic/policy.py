"""Heuristic Policy for ``mujoco/ant``: a gentle open-loop gait of one sine wave per joint.

Observation (105 floats): ignored. Action: 8 joint torques in [-1, 1] (hip 4, ankle 4, hip 1, ankle 1, hip 2,
ankle 2, hip 3, ankle 3). Joint ``j`` gets ``BIAS[j] + AMPLITUDE[j] * sin(2 pi t / PERIOD_STEPS + PHASE[j])`` at
step ``t``. The Ant is paid 1 per step for staying healthy whatever it does and 0.5 * sum(action^2) is charged per
step, so sitting still (the zero action) already scores about 1000. The gait's amplitudes are small (found
offline by a short random search on Ant-v5, seeds unrelated to any Benchmark pool) and it creeps forwards on some
resets, but it does NOT beat the zero action on average (about 956 against 996 over 5 Episodes): a starting point
for an Agent, not a solution.
"""

import math
from typing import Any

import numpy as np

PERIOD_STEPS = 23.28
AMPLITUDE = np.array([0.369, 0.18, 0.295, 0.205, 0.378, 0.073, 0.102, 0.203])
PHASE = np.array([0.048, -1.062, -1.223, -2.582, 0.014, 2.077, 2.305, -0.536])
BIAS = np.array([0.096, 0.093, -0.036, -0.077, 0.067, 0.088, 0.03, 0.093])


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
