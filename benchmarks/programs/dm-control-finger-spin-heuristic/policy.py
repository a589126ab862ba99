"""Heuristic Policy for ``dm-control/finger-spin``: the fingertip strokes the spinner's near end upward, again and
again, along an elliptical path.

Observation: ``position`` = [proximal angle, distal angle, spinner tip x, z relative to its hinge] (rad, m),
``velocity`` = [proximal, distal, spinner rates], ``touch``; action: two joint torques in [-1, 1]. The finger's
base is 0.4 m left of the spinner's hinge at the same height; its links are 0.18 m and 0.17 m (fingertip centre), a
joint angle of 0 pointing right and positive turning up. So the fingertip's position and Jacobian are known, and
``torque = J^T (STIFFNESS * (target - tip)) - DAMPING * joint rates`` pulls it to a target point that runs round
an ellipse centred near the hinge at ``FREQUENCY`` Hz: upward while it crosses the spinner's near side (which turns
the spinner the rewarded, negative way) and back down out of its path. The reward is 1 while the spinner turns at
15 rad/s or more, so only strokes that keep it that fast pay. The ellipse's numbers came from a short random search
(150 tries on four 300-step Episodes); the path is open loop (the spinner's angle is not used), so the strokes
are not timed to the spinner: a start for feedback, not a good spinner.
"""

import math
from typing import Any

import numpy as np

BASE = (-0.4, 0.0)  # the finger's base relative to the spinner's hinge (m)
PROXIMAL, DISTAL = 0.18, 0.17
CENTRE = (0.018, 0.034)  # ellipse centre relative to the hinge (m)
SEMI_AXES = (-0.09, 0.195)  # x, z (m); the signs set where the path starts and its direction
FREQUENCY = 3.43
STIFFNESS = 252.0
DAMPING = 0.072


class FingertipStroke:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0

    def act(self, observation: Any) -> Any:
        q1, q2 = float(observation["position"][0]), float(observation["position"][1])
        rates = np.asarray(observation["velocity"][:2], dtype=np.float64)
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        tip = np.array([BASE[0] + PROXIMAL * c1 + DISTAL * c12, BASE[1] + PROXIMAL * s1 + DISTAL * s12])
        jacobian = np.array(
            [[-PROXIMAL * s1 - DISTAL * s12, -DISTAL * s12], [PROXIMAL * c1 + DISTAL * c12, DISTAL * c12]]
        )
        phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep
        self.steps += 1
        target = np.array([CENTRE[0] + SEMI_AXES[0] * math.cos(phase), CENTRE[1] + SEMI_AXES[1] * math.sin(phase)])
        torque = jacobian.T @ (STIFFNESS * (target - tip)) - DAMPING * rates
        return np.clip(torque, -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return FingertipStroke(float(context.environment_parameters.get("control_timestep", 0.02)))
