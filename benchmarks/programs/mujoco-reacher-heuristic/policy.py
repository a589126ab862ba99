"""Heuristic Policy for ``mujoco/reacher``: proportional-derivative control of the fingertip towards the target.

Observation (10): [cos q0, cos q1, sin q0, sin q1, target x, target y, q0 velocity, q1 velocity, fingertip - target
x, y]; action: two joint torques in [-1, 1]. The arm's kinematics are known (links of 0.1 and 0.11 from the
shoulder to the fingertip), so the Policy maps a virtual spring pulling the fingertip to the target through the
Jacobian transpose, ``torque = J^T (-KP * error) - KD * joint velocity``, and clips it to the bounds. The gains are
small on purpose: every step costs the squared torque, so a gentle approach scores better than a fast one.
"""

import math
from typing import Any

import numpy as np

KP = 20.0
KD = 0.06


class FingertipSpring:
    def __init__(self, low: Any, high: Any) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)

    def act(self, observation: Any) -> Any:
        o = [float(v) for v in observation]
        q0, q01 = math.atan2(o[2], o[0]), math.atan2(o[2], o[0]) + math.atan2(o[3], o[1])
        jacobian = np.array(
            [
                [-0.1 * math.sin(q0) - 0.11 * math.sin(q01), -0.11 * math.sin(q01)],
                [0.1 * math.cos(q0) + 0.11 * math.cos(q01), 0.11 * math.cos(q01)],
            ]
        )
        torque = jacobian.T @ (-KP * np.array([o[8], o[9]])) - KD * np.array([o[6], o[7]])
        return np.clip(torque, self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    return FingertipSpring(context.action_space.low, context.action_space.high)
