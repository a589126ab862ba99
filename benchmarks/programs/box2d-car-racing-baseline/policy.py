"""Baseline Policy for ``box2d/car-racing``: straight ahead at half throttle (discrete mode: always gas).

The car follows the first straight, misses the first bend and drives across the grass until it leaves the
playfield or the time runs out: the floor any Policy should beat.

Observation: a 96x96x3 uint8 RGB image (numpy array) seen from above, the car near rows 66-77 and columns 45-50
facing up; the road is grey, the grass green; the bottom 12 rows hold the speed, ABS, steering and gyro bars.
Continuous action: [steer in [-1, 1] (-1 left), gas in [0, 1], brake in [0, 1]]; discrete actions (setting
``continuous=false``): 0 nothing, 1 steer right, 2 steer left, 3 gas, 4 brake.

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
Actions outside the action space are rejected (the Episode fails), never clipped.
"""

from typing import Any

import numpy as np


class StraightHalfThrottle:
    def __init__(self, continuous: bool) -> None:
        self.action: Any = np.array([0.0, 0.5, 0.0], dtype=np.float32) if continuous else 3

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return StraightHalfThrottle(bool(context.environment_parameters.get("continuous", True)))
