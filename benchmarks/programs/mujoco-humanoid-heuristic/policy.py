"""Heuristic Policy for ``mujoco/humanoid``: a stiff posture controller that keeps the humanoid standing longer.

Observation (348 floats by default): torso z, torso orientation quaternion (w, x, y, z), 17 joint angles, 6 torso
velocities, 17 joint velocities, then inertia/velocity/force blocks this Policy does not use. Action: 17 joint
torques in [-0.4, 0.4], in the order of the joint angles. Each joint is driven back to its rest angle 0 by a
proportional-derivative law ``-KP * angle - KD * velocity`` (stiff, barely damped), which keeps the body straight and
the centre of mass over the feet two to three times longer than going limp. The Episode still ends when the
humanoid falls; this Policy earns its score by surviving longer, not by walking.
"""

from typing import Any

import numpy as np

KP = 1.0
KD = 0.01


class Posture:
    def __init__(self, low: Any, high: Any, offset: int) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.offset = offset

    def act(self, observation: Any) -> Any:
        o = np.asarray(observation, dtype=np.float64)[self.offset :]
        angles, velocities = o[5:22], o[28:45]
        torque = -KP * angles - KD * velocities
        return np.clip(torque, self.low, self.high).astype(np.float32)


def make_policy(context: Any) -> Any:
    excluded = bool(context.environment_parameters.get("exclude_current_positions_from_observation", True))
    return Posture(context.action_space.low, context.action_space.high, 0 if excluded else 2)
