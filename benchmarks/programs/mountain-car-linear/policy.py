"""A linear MountainCar (discrete) Policy whose parameters live in ``params.json`` next to this file.

``act(obs)`` accelerates right (2) when ``w_position*position + w_velocity*velocity + bias > 0``, else left (0).
Observations are ``(position, velocity)``; velocity is small (|v| <= 0.07), hence the larger scale on its weight.
The shipped parameters are all zero, so the car always accelerates left and never reaches the flag: a
deliberately poor start for the built-in ``hill-climb`` agent (pushing in the direction of the velocity wins).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

VELOCITY_SCALE = 10.0


class LinearPolicy:
    """``2 if w . (position, 10 * velocity) + bias > 0 else 0``."""

    def __init__(self, weights: np.ndarray[Any, np.dtype[np.float64]], bias: float) -> None:
        self.weights = weights
        self.bias = bias

    def act(self, observation: Any) -> int:
        position, velocity = np.asarray(observation, dtype=np.float64).reshape(-1)[:2]
        features = np.array([position, VELOCITY_SCALE * velocity])
        return 2 if float(self.weights @ features) + self.bias > 0.0 else 0


def make_policy(context: Any) -> LinearPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    weights = np.array([float(params["w_position"]), float(params["w_velocity"])], dtype=np.float64)
    return LinearPolicy(weights, float(params["bias"]))
