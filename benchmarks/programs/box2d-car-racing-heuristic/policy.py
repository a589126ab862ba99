"""Heuristic Policy for ``box2d/car-racing``: follow the grey road seen in the image at a moderate speed.

Perception (no learning): a pixel is road when its three channels are equal within 12 and between 80 and 130
(grass is green, kerbs red and white). On four rows ahead of the car it finds the road run nearest the car's
column (47.5) and its centre; ``offset`` is the mean centre's distance from the car's column in half-widths
(negative: the road bends left). The speed is read from the white speed bar at column 12 of the bottom rows.

Control: steer ``2 * offset + 1 * (change of offset)``; aim for speed 60, less by 40 x the far row's |offset| in
bends; accelerate or brake in proportion to the difference. Everything is clipped to the action bounds here,
because the Environment rejects out-of-range actions. In discrete mode (``continuous=false``) the largest of
steer, gas and brake picks the action. It drives most or all of a lap in 1000 steps without leaving the road.
"""

from typing import Any

import numpy as np

CAR_COLUMN = 47.5
ROWS = (62, 56, 50, 44)
GAINS = {
    "brake_gain": 1.0,
    "curve_slowdown": 1.0,
    "gas_gain": 1.0,
    "look_ahead": 0.0,
    "steer_damping": 1.0,
    "steer_gain": 2.0,
    "target_speed": 1.5,
}


def road_mask(image: Any) -> Any:
    pixels = np.asarray(image, dtype=np.int16)[:84]
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return (abs(r - g) < 12) & (abs(g - b) < 12) & (r > 80) & (r < 130)


def road_centre(row: Any) -> float | None:
    columns = np.flatnonzero(row)
    if columns.size == 0:
        return None
    nearest = int(columns[np.argmin(np.abs(columns - CAR_COLUMN))])
    left = right = nearest
    while left > 0 and row[left - 1]:
        left -= 1
    while right < row.size - 1 and row[right + 1]:
        right += 1
    return (left + right) / 2.0


def speed_of(image: Any) -> float:
    bar = float(np.asarray(image)[84:96, 12, 0].astype(np.int64).sum())
    return max(0.0, (bar - 90.0) / 11.6)


class RoadFollower:
    def __init__(self, params: dict[str, float], continuous: bool) -> None:
        self.p = params
        self.continuous = continuous
        self.previous = 0.0
        self.shift = int(min(30.0, max(0.0, 10.0 * params["look_ahead"])))

    def act(self, observation: Any) -> Any:
        p = self.p
        mask = road_mask(observation)
        offsets = []
        for row in ROWS:
            centre = road_centre(mask[max(0, row - self.shift)])
            offsets.append(0.0 if centre is None else (centre - CAR_COLUMN) / 48.0)
        offset = float(np.mean(offsets))
        steer = p["steer_gain"] * offset + p["steer_damping"] * (offset - self.previous)
        self.previous = offset
        wanted = 40.0 * p["target_speed"] - 40.0 * p["curve_slowdown"] * abs(offsets[-1])
        speed = speed_of(observation)
        gas = p["gas_gain"] * (wanted - speed) / 40.0 if speed < wanted else 0.0
        brake = p["brake_gain"] * (speed - wanted) / 40.0 if speed > wanted else 0.0
        steer, gas, brake = (float(np.clip(np.nan_to_num(v), lo, 1.0)) for v, lo in ((steer, -1), (gas, 0), (brake, 0)))
        if self.continuous:
            return np.array([steer, gas, brake], dtype=np.float32)
        choice = max((abs(steer), 1 if steer > 0 else 2), (gas, 3), (brake, 4))
        return choice[1] if choice[0] > 0.1 else 0


def make_policy(context: Any) -> Any:
    return RoadFollower(dict(GAINS), bool(context.environment_parameters.get("continuous", True)))
