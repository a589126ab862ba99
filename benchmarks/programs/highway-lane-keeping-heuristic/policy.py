"""Heuristic Policy for ``highway/lane-keeping``: a proportional controller on the lateral and heading errors.

Observation: a dict of float64 ``[4, 1]`` arrays; ``state`` = [lateral position y, heading psi, lateral speed,
yaw rate] (noisy), ``reference_state`` = [y of the lane centre, lane heading, 0, 0]. Action: ``[steering]`` in
[-1, 1]. Reward per step: 1 - (lateral offset / lane width)^2.

The rule: steer against the lateral offset and the heading error,
``steering = -(LATERAL_GAIN * (y - y_ref) + HEADING_GAIN * (psi - psi_ref))``, clipped to [-1, 1].
"""

from typing import Any

import numpy as np

LATERAL_GAIN = 0.5
HEADING_GAIN = 2.0


class Proportional:
    def act(self, observation: Any) -> Any:
        state = np.asarray(observation["state"], dtype=np.float64).reshape(-1)
        reference = np.asarray(observation["reference_state"], dtype=np.float64).reshape(-1)
        steering = -(LATERAL_GAIN * (state[0] - reference[0]) + HEADING_GAIN * (state[1] - reference[1]))
        return np.array([np.clip(steering, -1.0, 1.0)], dtype=np.float32)


def make_policy(context: Any) -> Any:
    return Proportional()
