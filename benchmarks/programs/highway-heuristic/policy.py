"""Heuristic Policy for the discrete ``highway/*`` Benchmarks with kinematics observations
(``highway``, ``merge``, ``roundabout``, ``intersection``, ``exit``): keep the lane, drive fast, and slow down
when a conflict with another vehicle is predicted.

Each observation row is one vehicle: ``[presence, x, y, vx, vy, ...]``, row 0 the ego vehicle, normalized to
[-1, 1] by the ``features_range`` given in ``environment_parameters["config"]["observation"]``; other vehicles are
relative to the ego vehicle unless the observation config says ``absolute``. The rule extrapolates every vehicle
ahead of the ego vehicle (those behind brake for it) at constant relative velocity for ``HORIZON`` seconds and
predicts the closest approach: if some vehicle comes within ``SAFE_DISTANCE`` metres it brakes (SLOWER), otherwise
it accelerates (FASTER). ``TUNING`` adjusts this per environment (at the intersection, braking for every crossing
car costs more than it saves, so it only brakes for imminent conflicts and otherwise keeps its speed).
"""

from typing import Any

import numpy as np

HORIZON = 3.0
SAFE_DISTANCE = 8.0
TUNING = {"intersection-v2": (1.0, 2.5, "idle")}
"""Per environment: (horizon in s, safe distance in m, action when no conflict: "faster" or "idle")."""


class KeepDistance:
    def __init__(self, parameters: Any, n_actions: int) -> None:
        observation = parameters["config"]["observation"]
        ranges = observation["features_range"]
        self.features = list(observation["features"])
        self.absolute = bool(observation.get("absolute", False))
        self.low = np.array([ranges[k][0] for k in ("x", "y", "vx", "vy")], dtype=np.float64)
        self.high = np.array([ranges[k][1] for k in ("x", "y", "vx", "vy")], dtype=np.float64)
        self.columns = [self.features.index(k) for k in ("x", "y", "vx", "vy")]
        tuning = TUNING.get(parameters["gymnasium_id"], (HORIZON, SAFE_DISTANCE, "faster"))
        self.horizon, self.safe_distance, cruise = tuning
        # DiscreteMetaAction: 5 actions (LANE_LEFT, IDLE, LANE_RIGHT, FASTER, SLOWER) or 3 (SLOWER, IDLE, FASTER)
        self.slower, self.faster = (4, 3) if n_actions == 5 else (0, 2)
        self.cruise = self.faster if cruise == "faster" else 1

    def _metric(self, rows: Any) -> Any:
        unit = (np.asarray(rows, dtype=np.float64)[:, self.columns] + 1.0) / 2.0
        return self.low + unit * (self.high - self.low)

    def act(self, observation: Any) -> Any:
        rows = np.asarray(observation, dtype=np.float64)
        present = rows[1:, 0] > 0.5
        if not present.any():
            return self.cruise
        values = self._metric(rows)
        others = values[1:][present]
        relative = others - values[0] if self.absolute else others
        position, velocity = relative[:, :2], relative[:, 2:]
        heading = values[0, 2:] if float(np.hypot(*values[0, 2:])) > 0.1 else np.array([1.0, 0.0])
        ahead = position @ heading > 0.0  # vehicles behind brake for us
        position, velocity = position[ahead], velocity[ahead]
        speed2 = np.maximum((velocity**2).sum(axis=1), 1e-9)
        t = np.clip(-(position * velocity).sum(axis=1) / speed2, 0.0, self.horizon)
        closest = np.linalg.norm(position + velocity * t[:, None], axis=1)
        return self.slower if bool((closest < self.safe_distance).any()) else self.cruise


def make_policy(context: Any) -> Any:
    return KeepDistance(context.environment_parameters, int(context.action_space.n))
