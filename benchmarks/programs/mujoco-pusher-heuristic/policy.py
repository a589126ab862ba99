"""Heuristic Policy for ``mujoco/pusher``: bring the gripper behind the object, then push it towards the goal.

Observation (23): 7 joint angles, 7 joint velocities, then the xyz of the gripper (``tips_arm``), of the object and
of the goal; action: 7 joint torques in [-2, 2] (shoulder pan, shoulder lift, upper-arm roll, elbow flex, forearm
roll, wrist flex, wrist roll). There is no gravity. The Policy knows the arm's kinematic chain (shoulder at
(0, -0.6, 0); 0.1 to the lift joint, 0.4 upper arm, 0.321 forearm to the wrist) and maps a virtual spring
pulling the gripper to a way-point through the Jacobian transpose: ``torque = J^T (KP * error) - KD * velocity``.
Phase one aims at a point ``BEHIND`` metres behind the object on the goal-object line (at the object's height);
once the gripper is within ``CLOSE`` of it, phase two aims past the object at the goal so the gripper shoves it.
"""

import math
from typing import Any

import numpy as np

KP = 4.0
KD = 0.2
BEHIND = 0.09
CLOSE = 0.05
_BASE = np.array([0.0, -0.6, 0.0])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def gripper(q: np.ndarray) -> np.ndarray:
    """Forward kinematics of the wrist (the observed ``tips_arm`` point) from the first five joint angles."""
    pan = _rz(q[0])
    upper = pan @ _ry(q[1]) @ _rx(q[2])
    fore = upper @ _ry(q[3]) @ _rx(q[4])
    position: np.ndarray = _BASE + pan @ [0.1, 0.0, 0.0] + upper @ [0.4, 0.0, 0.0] + fore @ [0.321, 0.0, 0.0]
    return position


def jacobian(q: np.ndarray) -> np.ndarray:
    """d gripper / d q for all seven joints (the wrist joints do not move the wrist point)."""
    columns = np.zeros((3, 7))
    for j in range(5):
        dq = np.zeros(7)
        dq[j] = 1e-5
        columns[:, j] = (gripper(q + dq) - gripper(q - dq)) / 2e-5
    return columns


class Shove:
    def __init__(self, low: Any, high: Any) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.pushing = False

    def act(self, observation: Any) -> Any:
        o = np.asarray(observation, dtype=np.float64)
        q, qd, tip, obj, goal = o[:7], o[7:14], o[14:17], o[17:20], o[20:23]
        direction = goal[:2] - obj[:2]
        direction = direction / max(1e-6, float(np.linalg.norm(direction)))
        behind = np.array([obj[0] - BEHIND * direction[0], obj[1] - BEHIND * direction[1], obj[2]])
        if not self.pushing and np.linalg.norm(tip - behind) < CLOSE:
            self.pushing = True
        target = np.array([goal[0], goal[1], obj[2]]) if self.pushing else behind
        torque = jacobian(q).T @ (KP * (target - tip)) - KD * qd
        return np.clip(torque, self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    return Shove(context.action_space.low, context.action_space.high)
