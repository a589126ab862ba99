"""A linear Pendulum Policy whose parameters live in ``params.json`` next to this file.

``act(obs)`` applies the torque ``clip(w_cos*cos(theta) + w_sin*sin(theta) + w_velocity*theta_dot + bias)``
within the action space's bounds, returned as a float32 array of shape ``(1,)``. The shipped parameters are all
zero (no torque: the pendulum just swings), a poor start that the built-in ``hill-climb`` agent improves; a linear
controller cannot swing up from every start, but it can learn to damp and hold the pendulum near the top.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = ("w_cos", "w_sin", "w_velocity")


class LinearPolicy:
    """``clip(w . obs + bias, low, high)`` as a one-element float32 array."""

    def __init__(self, weights: np.ndarray[Any, np.dtype[np.float64]], bias: float, low: float, high: float) -> None:
        self.weights = weights
        self.bias = bias
        self.low = low
        self.high = high

    def act(self, observation: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
        obs = np.asarray(observation, dtype=np.float64).reshape(-1)[:3]
        torque = float(np.clip(float(self.weights @ obs) + self.bias, self.low, self.high))
        return np.array([torque], dtype=np.float32)


def _bounds(context: Any) -> tuple[float, float]:
    space = getattr(context, "action_space", None)
    try:
        return float(np.min(space.low)), float(np.max(space.high))  # type: ignore[union-attr]
    except (AttributeError, TypeError, ValueError):
        return -2.0, 2.0


def make_policy(context: Any) -> LinearPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    weights = np.array([float(params[name]) for name in FEATURES], dtype=np.float64)
    low, high = _bounds(context)
    return LinearPolicy(weights, float(params["bias"]), low, high)
