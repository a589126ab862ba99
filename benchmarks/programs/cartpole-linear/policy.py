"""A linear CartPole Policy whose parameters live in ``params.json`` next to this file.

``act(obs)`` pushes right (1) when ``w0*x/2.4 + w1*x_dot/1 + w2*theta/0.1 + w3*theta_dot/0.5 > 0``, else left (0).
Each observation is divided by its typical size (the track's half-width, a brisk cart speed, 0.1 rad of tilt, a
brisk swing), so weights of order 1 are all worth trying and a random search finds good ones. There is no bias:
the task is symmetric. The shipped parameters are all zero, so it always pushes left and the pole falls within ~10
steps: a deliberately poor start that the built-in ``hill-climb`` agent improves by editing ``params.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = ("w0", "w1", "w2", "w3")
SCALES = (2.4, 1.0, 0.1, 0.5)


class LinearPolicy:
    """``1 if w . (obs / SCALES) > 0 else 0``."""

    def __init__(self, weights: np.ndarray[Any, np.dtype[np.float64]]) -> None:
        self.weights = weights

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation, dtype=np.float64).reshape(-1)
        return 1 if float(self.weights @ obs) > 0.0 else 0


def make_policy(context: Any) -> LinearPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    weights = np.array([float(params[name]) / scale for name, scale in zip(FEATURES, SCALES, strict=True)])
    return LinearPolicy(weights)
