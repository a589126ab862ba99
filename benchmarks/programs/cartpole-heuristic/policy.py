"""Heuristic Policy for ``cartpole``: push toward where the pole is falling, with a little cart centring.

The rule is a hand-tuned linear controller on the observation [x, x_dot, theta, theta_dot]: push right when
``theta + 0.3 * theta_dot + 0.01 * x + 0.1 * x_dot`` is positive. The pole-angle terms keep the pole up; the small
cart terms stop the cart from drifting off the track over 500 steps.
"""

from typing import Any

WEIGHTS = (0.01, 0.1, 1.0, 0.3)


class LinearRule:
    def act(self, observation: Any) -> Any:
        x, x_dot, theta, theta_dot = (float(v) for v in observation)
        drive = WEIGHTS[0] * x + WEIGHTS[1] * x_dot + WEIGHTS[2] * theta + WEIGHTS[3] * theta_dot
        return 1 if drive > 0 else 0


def make_policy(context: Any) -> Any:
    return LinearRule()
