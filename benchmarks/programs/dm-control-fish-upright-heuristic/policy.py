"""Heuristic Policy for ``dm-control/fish-upright``: keep swimming, track which way is up, and pitch and roll toward it
with the fins.

Observation: ``joint_angles``, ``upright`` (the cosine of the fish's tilt: the vertical component of the world's up
direction in the fish's frame), ``velocity`` (the first three entries the linear velocity, the next three the body's
angular velocity in its own frame, then the seven joints); action: five position commands in [-1, 1] (tail yaw, tail
twist, fin flap, left fin pitch, right fin pitch). ``upright`` alone does not say which way the fish leans, so the
Policy tracks the up direction in the fish's frame: it starts from :data:`HYPOTHESES` guesses of the lean's
direction, turns each with the measured angular velocity every step, scores each by how well it predicted the next
``upright`` and uses the best. While the tail beats and the fins flap (the gait of the fish-swim heuristic), both fins
pitched together turn the fish about its lateral axis and pitched against each other roll it about its long axis
(measured); the pitch and roll commands are proportional to the up direction's two sideways components, which turns
the fish's top toward up. It rights most Episodes within a few seconds, slower when it starts upside down.
"""

import math
from typing import Any

import numpy as np

FREQUENCY = 0.857  # Hz, tail beat and fin flap
TAIL = 0.646
FLAP = 1.329
PITCH_GAIN = 1.0
ROLL_GAIN = 1.0
HYPOTHESES = 16
FORGET = 0.95  # how fast old prediction errors fade from a guess's score


def _rotate(vectors: np.ndarray, rate: np.ndarray, dt: float) -> np.ndarray:
    """Each row of ``vectors`` (a fixed world direction in body coordinates) after the body turns at ``rate``."""
    speed = float(np.linalg.norm(rate))
    if speed < 1e-9:
        return vectors
    axis = rate / speed
    angle = -speed * dt
    c, s = math.cos(angle), math.sin(angle)
    return vectors * c + np.cross(axis, vectors) * s + np.outer(vectors @ axis, axis) * (1 - c)


class Upright:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0
        self.up: np.ndarray | None = None  # one guess of the up direction (body frame) per row
        self.misfit = np.zeros(HYPOTHESES)
        self.rate = np.zeros(3)

    def _estimate(self, upright: float, rate: np.ndarray) -> np.ndarray:
        flat = math.sqrt(max(0.0, 1.0 - upright * upright))
        if self.up is None:
            angles = np.linspace(0.0, 2 * math.pi, HYPOTHESES, endpoint=False)
            self.up = np.stack([flat * np.cos(angles), flat * np.sin(angles), np.full(HYPOTHESES, upright)], axis=1)
        else:
            self.up = _rotate(self.up, 0.5 * (rate + self.rate), self.timestep)
            self.misfit = FORGET * self.misfit + (self.up[:, 2] - upright) ** 2
            sideways = np.linalg.norm(self.up[:, :2], axis=1, keepdims=True)
            self.up[:, :2] *= flat / np.maximum(sideways, 1e-9)
            self.up[:, 2] = upright
        self.rate = rate
        best: np.ndarray = self.up[int(np.argmin(self.misfit))]
        return best

    def act(self, observation: Any) -> Any:
        upright = float(observation["upright"])
        rate = np.asarray(observation["velocity"][3:6], dtype=np.float64)
        up_x, up_y, _ = self._estimate(upright, rate)
        phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep
        self.steps += 1
        pitch, roll = -PITCH_GAIN * up_y, ROLL_GAIN * up_x
        action = [TAIL * math.sin(phase), 0.0, FLAP * math.sin(phase), pitch + roll, pitch - roll]
        return np.clip(np.array(action, dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return Upright(float(context.environment_parameters.get("control_timestep", 0.04)))
