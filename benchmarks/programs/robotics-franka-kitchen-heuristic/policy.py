"""Heuristic Policy for ``robotics/franka-kitchen``: flick the light switch, then slide the cabinet door open.

Observation: a dict; ``observation[0:7]`` the arm's seven joint angles (radians, with upstream's small noise).
Action: 9 joint velocities in [-1, 1]; upstream scales them by 2 rad/s and turns them into position targets over
one step of 0.08 s, so a velocity of (target - angle) / (2 * 0.08) heads straight for a target angle.

The kitchen's layout is fixed, so the Policy follows WAYPOINTS, arm postures found offline by inverse kinematics
of the gripper's position on upstream's model (the objects' positions are fixed in the scene):

1. beside the light switch (8 cm to its right, 3 cm above its knob), in front of it, then in line with it;
2. sweep 20 cm to the left, which turns the switch fully on, then back off and lift clear;
3. to the left of the sliding cabinet door's handle (10 cm), in front of it, then in line with it;
4. sweep 25 cm to the right, which slides the door open.

Each step it heads for the current waypoint and moves on once every joint is within REACHED radians of it, or
after PATIENCE steps (a waypoint blocked by contact is passed). The fingers stay closed. The other five tasks
(microwave, kettle, burners, hinge cabinet) are not attempted.
"""

from typing import Any

import numpy as np

VELOCITY_SCALE = 2.0 * 0.08  # upstream's action scale (rad/s) times its step (s)
REACHED = 0.03
PATIENCE = 25
WAYPOINTS = [
    [-0.955, -1.731, 1.273, -2.373, 0.163, 1.209, 1.595],
    [-1.382, -1.604, 1.311, -2.027, 0.158, 1.372, 1.595],
    [-1.544, -1.564, 1.321, -1.446, 0.145, 1.549, 1.595],
    [-1.386, -1.598, 1.309, -1.611, 0.152, 1.521, 1.595],
    [-1.164, -1.607, 1.21, -1.796, 0.169, 1.486, 1.595],
    [-1.244, -1.403, 0.852, -2.1, 0.205, 1.42, 1.595],
    [-1.525, -1.203, 1.033, -1.787, 0.18, 1.499, 1.595],
    [-1.716, -1.05, 1.009, -1.882, 0.184, 1.463, 1.595],
]


class Kitchen:
    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype
        self.index = 0
        self.waited = 0

    def act(self, observation: Any) -> Any:
        angles = np.asarray(observation["observation"], dtype=np.float64)[:7]
        error = np.asarray(WAYPOINTS[self.index]) - angles
        self.waited += 1
        reached = float(np.abs(error).max()) < REACHED or self.waited > PATIENCE
        if reached and self.index < len(WAYPOINTS) - 1:
            self.index, self.waited = self.index + 1, 0
        action = np.full(self.shape, -1.0)  # the fingers close
        action[:7] = np.clip(error / VELOCITY_SCALE, -1.0, 1.0)
        return action.astype(self.dtype)


def make_policy(context: Any) -> Any:
    return Kitchen(context.action_space.shape, context.action_space.dtype)
