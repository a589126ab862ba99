"""Heuristic Policy for ``mujoco/humanoid-standup``: hold a stiff posture that keeps the torso off the ground.

Observation (348 floats by default): torso z, torso orientation quaternion, 17 joint angles, 6 torso velocities,
17 joint velocities, then blocks this Policy does not use. Action: 17 joint torques in [-0.4, 0.4] (abdomen y, z,
x; right hip x, z, y; right knee; left hip x, z, y; left knee; right shoulder 1, 2; right elbow; left shoulder 1,
2; left elbow). Every joint is driven to the angle in ``TARGET`` by ``KP * (target - angle) - KD * velocity``.
The reward is mostly the torso height, so a posture that props the torso up (stiff body, arms braced) scores
better than lying limp, although it does not stand the humanoid up.
"""

from typing import Any

import numpy as np

KP = 1.0
KD = 0.01
TARGET = np.zeros(17)
TARGET[[5, 9]] = -2.0  # both hip_y: thighs flexed towards the chest
TARGET[[11, 14]] = 1.0  # both shoulder1: arms braced


class Posture:
    def __init__(self, low: Any, high: Any, offset: int) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.offset = offset

    def act(self, observation: Any) -> Any:
        o = np.asarray(observation, dtype=np.float64)[self.offset :]
        angles, velocities = o[5:22], o[28:45]
        torque = KP * (TARGET - angles) - KD * velocities
        return np.clip(torque, self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    excluded = bool(context.environment_parameters.get("exclude_current_positions_from_observation", True))
    return Posture(context.action_space.low, context.action_space.high, 0 if excluded else 2)
