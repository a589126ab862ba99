"""Heuristic Policy for ``robotics/franka-kitchen``: turn the bottom burner's knob, the light switch, open the slide.

Observation: a dict; ``observation[0:7]`` the arm's seven joint angles (radians, with upstream's small noise).
Action: 9 joint velocities in [-1, 1]; upstream scales them by 2 rad/s and turns them into position targets over
one step of 0.08 s, so a velocity of (target - angle) / (2 * 0.08) heads straight for a target angle.

The kitchen's layout is fixed, so the Policy follows WAYPOINTS, arm postures found offline by inverse kinematics
of the gripper's position on upstream's model (the objects' positions are fixed in the scene):

1. beside the bottom burner's knob (7 cm to its right, level with its top), then sweep 12 cm to the left, which
   turns the knob past its goal; back off;
2. beside the light switch (8 cm to its right, 3 cm above it), then sweep 20 cm to the left, which turns the
   switch fully on; back off and lift clear;
3. to the left of the sliding cabinet door's handle (10 cm), then sweep 25 cm to the right: the door slides open.

Each step it heads for the current waypoint and moves on once every joint is within REACHED radians of it, or
after PATIENCE steps (a waypoint blocked by contact is passed). The fingers stay closed. The other four tasks
(microwave, kettle, top burner, hinge cabinet) are not attempted. The sweeps' heights were picked by trying a few
on training Episodes: a knob or switch pushed a centimetre too low or high is missed, but the scene and the start
posture barely vary, so the same waypoints work in every Episode we tried.
"""

from typing import Any

import numpy as np

VELOCITY_SCALE = 2.0 * 0.08  # upstream's action scale (rad/s) times its step (s)
REACHED = 0.03
PATIENCE = 25
WAYPOINTS = [
    [-1.075, -1.743, 1.279, -2.465, 0.152, 1.255, 1.595],  # bottom burner knob: 7 cm right, 8 cm up, in front
    [-1.501, -1.615, 1.313, -2.091, 0.146, 1.415, 1.595],  # in line with the knob's top
    [-1.465, -1.624, 1.312, -1.851, 0.142, 1.495, 1.595],  # swept 12 cm left: the knob turns
    [-1.036, -1.741, 1.291, -2.236, 0.153, 1.386, 1.595],  # backed off
    [-0.958, -1.763, 1.282, -2.418, 0.156, 1.319, 1.595],  # light switch: 8 cm right, 3 cm above, in front
    [-1.391, -1.633, 1.306, -2.056, 0.148, 1.455, 1.595],  # in line with it
    [-1.556, -1.583, 1.304, -1.46, 0.133, 1.608, 1.595],  # swept 20 cm left: the switch turns on
    [-1.399, -1.621, 1.293, -1.63, 0.141, 1.591, 1.595],  # backed off
    [-1.181, -1.633, 1.197, -1.82, 0.16, 1.57, 1.595],  # lifted clear
    [-1.268, -1.425, 0.856, -2.128, 0.207, 1.506, 1.595],  # sliding door: 10 cm left of its handle, in front
    [-1.547, -1.228, 1.028, -1.806, 0.175, 1.565, 1.595],  # in line with the handle
    [-1.74, -1.077, 1.011, -1.901, 0.179, 1.524, 1.595],  # swept 25 cm right: the door slides open
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
