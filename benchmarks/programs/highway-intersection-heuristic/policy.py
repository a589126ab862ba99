"""Heuristic Policy for ``highway/intersection`` (intersection-v2): drive through at full speed, but keep a safe
gap to the vehicle ahead on the ego's own route.

The road is fixed: four approaches meeting at a junction, lanes 4 m wide, right turns of radius 9 m, left turns of
radius 13 m (highway-env's ``IntersectionEnv._make_road``). The ego vehicle enters from the south approach
(``o0``) and follows a fixed route to ``config["destination"]``; the Policy only chooses its speed (0 SLOWER,
1 IDLE, 2 FASTER among the target speeds ``[0, 4.5, 9]`` m/s). The reward is paid per step for high speed and a
crash ends the Episode with a penalty.

Braking for crossing traffic does not pay here (measured: a slow ego in the junction is hit by the vehicles that
would have passed behind it, and the others mostly yield), but vehicles that turn into the ego's exit lane ahead
of it, or brake in front of it, are hit from behind by a Policy that never slows down. So the rule rebuilds the
ego's route, places every observed vehicle (absolute coordinates, denormalized with the observation's
``features_range``) on it when its position and heading fit, and brakes (SLOWER) when one is ahead and either
closer than ``GAP`` metres bumper to bumper or closing in within ``TIME_GAP`` seconds (plus 2 m); otherwise it
accelerates to the top target speed (FASTER).
"""

from typing import Any

import numpy as np

GAP = 4.0
"""Bumper-to-bumper distance (m) below which the ego brakes for the vehicle ahead."""
TIME_GAP = 2.0
"""The ego brakes when it would close the gap to the vehicle ahead (less 2 m) within this many seconds."""

_LANE_WIDTH = 4.0
_RIGHT_RADIUS = _LANE_WIDTH + 5.0
_LEFT_RADIUS = _RIGHT_RADIUS + _LANE_WIDTH
_OUTER = _RIGHT_RADIUS + _LANE_WIDTH / 2.0
_ACCESS = 100.0
_SPACING = 0.5
_LENGTH = 5.0
_ON_ROUTE = 2.0  # metres from the route's centre line
_HEADING = np.radians(35.0)
_SLOWER, _FASTER = 0, 2


def _rotation(corner: int) -> Any:
    angle = np.radians(90.0 * corner)
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def _straight(start: Any, end: Any) -> Any:
    n = max(2, int(np.linalg.norm(np.subtract(end, start)) / _SPACING) + 1)
    return np.linspace(start, end, n)


def _arc(center: Any, radius: float, start: float, end: float) -> Any:
    n = max(2, int(abs(end - start) * radius / _SPACING) + 1)
    phi = np.linspace(start, end, n)
    return center + radius * np.stack([np.cos(phi), np.sin(phi)], axis=1)


def _ego_route(destination: int) -> Any:
    """Points every ~0.5 m along the route from the south approach (corner 0) to exit ``destination``."""
    approach = _straight([_LANE_WIDTH / 2, _ACCESS + _OUTER], [_LANE_WIDTH / 2, _OUTER])
    if destination == 3:  # right turn
        middle = _arc(np.array([_OUTER, _OUTER]), _RIGHT_RADIUS, np.pi, 1.5 * np.pi)
    elif destination == 1:  # left turn
        center = np.array([-_LEFT_RADIUS + _LANE_WIDTH / 2, _LEFT_RADIUS - _LANE_WIDTH / 2])
        middle = _arc(center, _LEFT_RADIUS, 0.0, -0.5 * np.pi)
    else:  # straight on
        middle = _straight([_LANE_WIDTH / 2, _OUTER], [_LANE_WIDTH / 2, -_OUTER])
    r = _rotation(destination + 1)
    exit_lane = _straight(r @ [_OUTER, _LANE_WIDTH / 2], r @ [_ACCESS + _OUTER, _LANE_WIDTH / 2])
    return np.concatenate([approach, middle[1:], exit_lane[1:]])


class FollowRoute:
    def __init__(self, parameters: Any) -> None:
        config = parameters["config"]
        observation = config["observation"]
        self.features = list(observation["features"])
        self.ranges = {k: observation["features_range"][k] for k in ("x", "y", "vx", "vy")}
        destination = int(str(config.get("destination") or "o1")[1:]) % 4
        self.points = _ego_route(destination if destination in (1, 2, 3) else 1)
        step = np.diff(self.points, axis=0)
        self.s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(step, axis=1))])
        step = np.concatenate([step, step[-1:]])
        self.heading = np.arctan2(step[:, 1], step[:, 0])

    def _column(self, rows: Any, name: str) -> Any:
        values = rows[:, self.features.index(name)]
        if name in self.ranges:
            low, high = self.ranges[name]
            return low + (values + 1.0) / 2.0 * (high - low)
        return values

    def _locate(self, position: Any, heading: float) -> float | None:
        """Arc length along the ego's route of a vehicle on it (position and heading fit), else None."""
        distance = np.linalg.norm(self.points - position, axis=1)
        mismatch = np.abs((self.heading - heading + np.pi) % (2 * np.pi) - np.pi)
        distance = np.where(mismatch < _HEADING, distance, np.inf)
        i = int(np.argmin(distance))
        return float(self.s[i]) if distance[i] < _ON_ROUTE else None

    def act(self, observation: Any) -> int:
        rows = np.asarray(observation, dtype=np.float64)
        position = np.stack([self._column(rows, "x"), self._column(rows, "y")], axis=1)
        speed = np.hypot(self._column(rows, "vx"), self._column(rows, "vy"))
        heading = np.arctan2(self._column(rows, "sin_h"), self._column(rows, "cos_h"))
        ego = self._locate(position[0], float(heading[0]))
        if ego is None:
            return _FASTER
        for i in np.nonzero(rows[1:, 0] > 0.5)[0] + 1:
            other = self._locate(position[i], float(heading[i]))
            if other is None or other <= ego:
                continue  # not on the route, or behind the ego (it brakes for the ego)
            gap = other - ego - _LENGTH
            closing = float(speed[0] - speed[i])
            if gap < GAP or (closing > 0.0 and gap < TIME_GAP * closing + 2.0):
                return _SLOWER
        return _FASTER


def make_policy(context: Any) -> Any:
    return FollowRoute(context.environment_parameters)
