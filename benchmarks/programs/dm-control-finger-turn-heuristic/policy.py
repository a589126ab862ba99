"""Heuristic Policy for ``dm-control/finger-turn-easy`` and ``-hard``: flick the spinner round with fast fingertip
strokes until its tip is at the target's angle, then pull the finger back and leave it there.

Observation: ``position`` = [proximal angle, distal angle, spinner tip x, z relative to its hinge] (rad, m),
``velocity`` = [proximal, distal, spinner rates], ``touch``, ``target_position`` (the target's x, z relative to the
hinge), ``dist_to_target`` (from the tip to the target's edge; 0 or below is rewarded); action: two joint torques in
[-1, 1]. The finger's base is 0.4 m left of the spinner's hinge at the same height; its links are 0.18 m and 0.17 m
(fingertip centre), a joint angle of 0 pointing right and positive turning up, so the fingertip's position and
Jacobian are known and ``torque = J^T (STIFFNESS * (goal - tip)) - DAMPING * joint rates`` pulls it toward a goal
point. The fingertip reaches only the near (left) side of the spinner, and the hinge is damped so strongly that the
spinner stops as soon as it is let go: it cannot be pushed slowly past pointing straight up or down. So the Policy
strokes: the goal runs round a small ellipse at ``FREQUENCY`` Hz, all of it beyond the finger's reach, so the
fingertip sweeps up and down along the edge of its reach and flicks the spinner on. The tip's angle comes from
``position``, the target's from ``target_position`` and the target's radius from the two distances; once the tip is
within ``TOL`` of that radius (as an angle from the hinge), or well inside the target, the finger goes to ``REST``,
clear of the spinner. When the tip starts inside the target the finger does not move at all. The numbers came from a
short random search (about 250 tries on ten to sixteen 400- and 500-step Episodes of the easy task). The strokes are
not aimed: many Episodes end with the spinner stuck short of the target, so it solves only some of them (over 24
Episodes, 42-50% of easy ones and 21-33% of hard ones, against the 8-25% that start solved).
"""

import math
from typing import Any

import numpy as np

BASE = (-0.4, 0.0)  # the finger's base relative to the spinner's hinge (m)
PROXIMAL, DISTAL = 0.18, 0.17
SPINNER = 0.13  # hinge to tip (m)
CENTRE = (0.1297, 0.0347)  # the stroke ellipse's centre relative to the hinge (m)
SEMI_AXES = (-0.0534, 0.0743)  # x, z (m); the signs set where the path starts and its direction
FREQUENCY = 2.2404
STIFFNESS = 380.2
DAMPING = 0.072
TOL = 0.8623  # the share of the target's radius (as an angle from the hinge) counted as there
COAST = 0.0135  # s: the spinner's rate times this is added to its angle
INSIDE = 0.2  # this share of the target's radius inside its edge counts as there, whatever the angle
REST = (-0.2491, -0.1522)  # where the fingertip waits, clear of the spinner (m)


class FlickToTarget:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0
        self.stroked = False

    def act(self, observation: Any) -> Any:
        q1, q2, tip_x, tip_z = (float(v) for v in observation["position"])
        rates = np.asarray(observation["velocity"][:2], dtype=np.float64)
        spin = -float(observation["velocity"][2])  # the rate of the tip's angle as measured here
        target_x, target_z = (float(v) for v in observation["target_position"])
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        fingertip = np.array([BASE[0] + PROXIMAL * c1 + DISTAL * c12, BASE[1] + PROXIMAL * s1 + DISTAL * s12])
        jacobian = np.array(
            [[-PROXIMAL * s1 - DISTAL * s12, -DISTAL * s12], [PROXIMAL * c1 + DISTAL * c12, DISTAL * c12]]
        )
        angle = math.atan2(tip_x, tip_z)  # from straight up, toward +x
        error = (math.atan2(target_x, target_z) - angle - COAST * spin) % (2.0 * math.pi)
        distance = float(observation["dist_to_target"])
        radius = math.hypot(target_x - tip_x, target_z - tip_z) - distance  # the target's
        tolerance = TOL * radius / SPINNER
        if distance <= 0.0 and not self.stroked:  # there from the start: the finger stays off the spinner
            return np.clip(-DAMPING * rates, -1.0, 1.0)
        if distance < -INSIDE * radius or error < tolerance or error > 2.0 * math.pi - tolerance:
            self.steps = 0
            goal = np.array(REST)
        else:
            self.stroked = True
            phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep
            self.steps += 1
            goal = np.array([CENTRE[0] + SEMI_AXES[0] * math.cos(phase), CENTRE[1] + SEMI_AXES[1] * math.sin(phase)])
        torque = jacobian.T @ (STIFFNESS * (goal - fingertip)) - DAMPING * rates
        return np.clip(torque, -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return FlickToTarget(float(context.environment_parameters.get("control_timestep", 0.02)))
