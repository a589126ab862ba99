"""Heuristic Policy for ``dm-control/acrobot-swingup``: pump energy with the elbow against the shoulder's swing.

Observation: ``orientations`` = [sin of the upper arm's angle, sin of the lower arm's, cos of the upper's, cos of
the lower's] (angles from upright: cos 1 = pointing up), ``velocity`` = [shoulder rate, elbow rate]; action: one
elbow torque in [-1, 1] (the shoulder is passive). The torque is ``SHOULDER_RATE_GAIN * shoulder rate`` (large and
negative, so nearly full torque against the shoulder's motion whenever it moves: each swing grows), plus small
terms on the elbow angle and the upper arm's lean. It swings the tip up toward the target again and again (the
shaped reward pays while the tip is near it) and has no mode that balances it there; the numbers came from a short
random search (80 tries on four 1000-step Episodes), so it is a start, not a solution. On
``acrobot-swingup-sparse`` (reward only inside the small target) it rarely scores, so that task ships no heuristic.
"""

import math
from typing import Any

import numpy as np

SHOULDER_RATE_GAIN = -11.4
ELBOW_ANGLE_GAIN = -0.19
LEAN_GAIN = -0.27


class ElbowPump:
    def act(self, observation: Any) -> Any:
        sin1, sin2, cos1, cos2 = (float(v) for v in observation["orientations"])
        shoulder_rate = float(observation["velocity"][0])
        upper, lower = math.atan2(sin1, cos1), math.atan2(sin2, cos2)
        elbow = math.atan2(math.sin(lower - upper), math.cos(lower - upper))
        torque = SHOULDER_RATE_GAIN * shoulder_rate + ELBOW_ANGLE_GAIN * elbow + LEAN_GAIN * math.sin(upper)
        return np.array([min(max(torque, -1.0), 1.0)], dtype=np.float64)


def make_policy(context: Any) -> Any:
    return ElbowPump()
