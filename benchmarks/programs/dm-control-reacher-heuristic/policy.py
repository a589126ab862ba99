"""Heuristic Policy for ``dm-control/reacher-easy`` and ``reacher-hard``: a virtual spring pulling the fingertip
onto the target, mapped to joint torques through the arm's Jacobian.

Observation: ``position`` = [shoulder angle, wrist angle] (rad), ``to_target`` = target minus fingertip [x, y]
(m, world frame), ``velocity`` = [shoulder, wrist angular velocities]; action: two torques in [-1, 1]. Both links
are 0.12 m long, so the fingertip's Jacobian is known and ``torque = J^T (KP * to_target) - KD * velocity``,
clipped. The reward is 1 while the fingertip touches the target, so the spring is stiff: arrive fast, then hold.
"""

import math
from typing import Any

import numpy as np

LINK = 0.12
KP = 800.0
KD = 0.5


class FingertipSpring:
    def act(self, observation: Any) -> Any:
        q0, q1 = (float(v) for v in observation["position"])
        error = np.asarray(observation["to_target"], dtype=np.float64)
        velocity = np.asarray(observation["velocity"], dtype=np.float64)
        s0, c0 = math.sin(q0), math.cos(q0)
        s01, c01 = math.sin(q0 + q1), math.cos(q0 + q1)
        jacobian = np.array([[-LINK * s0 - LINK * s01, -LINK * s01], [LINK * c0 + LINK * c01, LINK * c01]])
        torque = jacobian.T @ (KP * error) - KD * velocity
        return np.clip(torque, -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return FingertipSpring()
