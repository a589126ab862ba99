"""A tunable PD lander for ``box2d/lunar-lander`` (discrete and continuous); its gains live in ``params.json``.

Targets: ``tilt = clip(lean_per_x * x + lean_per_vx * vx, -lean_max, lean_max)`` and ``height = hover_per_x *
|x|``. Terms: ``turn = turn_kp * (tilt - angle) - turn_kd * angular_velocity`` and ``lift = lift_kp * (height -
y) - lift_kd * vy``; after touchdown ``turn = 0`` and ``lift = -touchdown_kd * vy``. Continuous actions are
``[20 * lift - 1, -20 * turn]`` clipped to [-1, 1]; discrete ones fire the engine of the largest term above 0.05.

The shipped gains are all zero: the engines never fire, exactly the baseline, a deliberately poor start that the
built-in ``hill-climb`` agent improves by editing ``params.json``. The observation is in units of the screen's
half-width, so gains of order 1 are all worth trying.
"""

import json
from pathlib import Path
from typing import Any

import numpy as np


class TunablePDLander:
    def __init__(self, params: dict[str, float], continuous: bool) -> None:
        self.p = params
        self.continuous = continuous

    def act(self, observation: Any) -> Any:
        p = self.p
        x, y, vx, vy, angle, spin, left, right = (float(v) for v in observation)
        lean = abs(p["lean_max"])
        tilt_target = min(lean, max(-lean, p["lean_per_x"] * x + p["lean_per_vx"] * vx))
        height_target = p["hover_per_x"] * abs(x)
        turn = p["turn_kp"] * (tilt_target - angle) - p["turn_kd"] * spin
        lift = p["lift_kp"] * (height_target - y) - p["lift_kd"] * vy
        if left or right:
            turn, lift = 0.0, -p["touchdown_kd"] * vy
        if self.continuous:
            action = np.array([lift * 20.0 - 1.0, -turn * 20.0], dtype=np.float64)
            return np.clip(np.nan_to_num(action), -1.0, 1.0).astype(np.float32)
        if lift > abs(turn) and lift > 0.05:
            return 2
        if turn < -0.05:
            return 3
        if turn > 0.05:
            return 1
        return 0


def make_policy(context: Any) -> Any:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    return TunablePDLander(
        {k: float(v) for k, v in params.items()}, bool(context.environment_parameters.get("continuous", False))
    )
