"""Baseline Policy for ``box2d/lunar-lander`` and ``box2d/lunar-lander-continuous``: never fire an engine.

The lander falls and crashes (or, rarely, drops onto the pad hard): the floor any Policy should beat.

Observation: [x, y, x velocity, y velocity, angle, angular velocity, left leg contact, right leg contact], with
the pad at x = 0, y = 0. Discrete actions: 0 nothing, 1 left engine, 2 main engine, 3 right engine. Continuous
action: [main, lateral] in [-1, 1] (main > 0 fires the main engine; |lateral| > 0.5 a side engine).

The contract: ``make_policy(context)`` returns an object whose ``act(observation)`` returns an action.
``context`` has ``observation_space``, ``action_space`` (gymnasium spaces), ``metadata``,
``environment_parameters`` (public Benchmark parameters) and ``policy_seed`` (use it for all randomness).
Actions outside the action space are rejected (the Episode fails), never clipped.
"""

from typing import Any

import numpy as np


class NoThrust:
    def __init__(self, continuous: bool) -> None:
        self.action: Any = np.zeros(2, dtype=np.float32) if continuous else 0

    def act(self, observation: Any) -> Any:
        return self.action


def make_policy(context: Any) -> Any:
    return NoThrust(bool(context.environment_parameters.get("continuous", False)))
