"""Heuristic Policy for ``box2d/bipedal-walker`` (and hardcore): a hand-tuned three-phase gait.

A state machine alternates the legs. ``swing``: the moving leg lifts forwards (hip to 1.1 rad, knee to -0.6)
while the supporting knee straightens; once the supporting hip has swung behind (angle < 0.1) the walker enters
``plant``: the moving leg reaches down until it touches the ground, then ``push``: the old supporting knee kicks
straight until it is nearly straight or the walker is faster than 1.2 x 0.29, and the legs swap roles. Joint
targets are followed by PD terms; both hips also hold the hull level and both knees damp vertical bouncing.
Torques are halved and clipped to [-1, 1] here, because the Environment rejects out-of-range actions. It has no
notion of the obstacles ahead (the lidar is unused): it walks most of the normal course on many Episodes, and
falls on others and on most hardcore obstacles.
"""

from typing import Any

import numpy as np

SWING, PLANT, PUSH = 0, 1, 2
GAINS = {
    "hip_kd": 0.25,
    "hip_kp": 0.9,
    "hull_kd": 1.5,
    "hull_kp": 0.9,
    "knee_kd": 0.25,
    "knee_kp": 4.0,
    "lift_hip": 1.1,
    "lift_knee": -0.6,
    "push_knee": 1.0,
    "speed": 0.29,
    "stance_knee": 0.1,
    "vertical_damping": 15.0,
}


class Gait:
    def __init__(self, params: dict[str, float]) -> None:
        self.p = params
        self.phase = SWING
        self.moving = 0
        self.stance_knee = params["stance_knee"]

    def act(self, observation: Any) -> Any:
        s = [float(v) for v in observation]
        p = self.p
        moving, support = self.moving, 1 - self.moving
        m, k = 4 + 5 * moving, 4 + 5 * support  # first index of each leg's five values
        hip_target: list[float | None] = [None, None]
        knee_target: list[float | None] = [None, None]
        if self.phase == SWING:
            hip_target[moving], knee_target[moving] = p["lift_hip"], p["lift_knee"]
            self.stance_knee = min(self.stance_knee + (0.06 if s[2] > p["speed"] else 0.03), p["stance_knee"])
            knee_target[support] = self.stance_knee
            if s[k] < 0.10:
                self.phase = PLANT
        if self.phase == PLANT:
            hip_target[moving], knee_target[moving] = 0.1, p["stance_knee"]
            knee_target[support] = self.stance_knee
            if s[m + 4]:
                self.phase = PUSH
                self.stance_knee = min(s[m + 2], p["stance_knee"])
        if self.phase == PUSH:
            knee_target[moving] = self.stance_knee
            knee_target[support] = p["push_knee"]
            if s[k + 2] > 0.88 or s[2] > 1.2 * p["speed"]:
                self.phase, self.moving = SWING, support
        torque = np.zeros(4)
        for leg in (0, 1):
            base = 4 + 5 * leg
            hip, knee = hip_target[leg], knee_target[leg]
            if hip is not None:
                torque[2 * leg] = p["hip_kp"] * (hip - s[base]) - p["hip_kd"] * s[base + 1]
            if knee is not None:
                torque[2 * leg + 1] = p["knee_kp"] * (knee - s[base + 2]) - p["knee_kd"] * s[base + 3]
            torque[2 * leg] += p["hull_kp"] * s[0] + p["hull_kd"] * s[1]  # lean the hips against hull tilt
            torque[2 * leg + 1] -= p["vertical_damping"] * s[3]
        return np.clip(np.nan_to_num(0.5 * torque), -1.0, 1.0).astype(np.float32)


def make_policy(context: Any) -> Any:
    return Gait(dict(GAINS))
