"""A linear CartPole Policy whose parameters live in ``params.json`` next to this file.

``act(obs)`` pushes right (1) when ``w0*x + w1*x_dot + w2*theta + w3*theta_dot + bias > 0``, else left (0).
The shipped parameters are all zero, so it always pushes left and the pole falls within ~10 steps: a deliberately
mediocre start that the built-in ``hill-climb`` agent improves by editing ``params.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = ("w0", "w1", "w2", "w3")


class LinearPolicy:
    """``1 if w . obs + bias > 0 else 0``."""

    def __init__(self, weights: np.ndarray[Any, np.dtype[np.float64]], bias: float) -> None:
        self.weights = weights
        self.bias = bias

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation, dtype=np.float64).reshape(-1)
        return 1 if float(self.weights @ obs) + self.bias > 0.0 else 0


def make_policy(context: Any) -> LinearPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    weights = np.array([float(params[name]) for name in FEATURES], dtype=np.float64)
    return LinearPolicy(weights, float(params["bias"]))
