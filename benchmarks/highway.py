"""HighwayEnv (highway-env 1.12) as Benchmarks: the ten single-agent driving tasks, ``highway/<task>``.

Each Benchmark is one highway-env environment id with its observation and action types as the upstream
defaults define them, made explicit: the full environment ``config`` (minus rendering-only keys) is part of
``spec.environment_parameters`` and its digest, so a highway-env release that changes a default changes the
Benchmark's identity instead of its behaviour silently. Kinematics observations get their ``features_range``
written out too (highway-env otherwise derives it from the road at run time), so a Policy can read the
normalization from ``context.environment_parameters["config"]["observation"]``.

Score (``mean_return``, maximize): the mean Episode return (highway-env's per-step reward, summed); an Episode
the Policy failed counts ``-max_episode_steps``; infra faults are left out. The simulation is deterministic given
the Episode seed (``reset(seed=...)`` seeds every random choice of highway-env), so ``evoledger replay --execute``
reproduces each trajectory digest.

Feedback: outcome classes ``crashed`` / ``arrived`` (the task's goal: through the intersection, past the merge,
onto the exit, into the parking spot) / ``left_road`` / ``timed_out``; every step's metrics describe the Episode so
far (``speed``, ``mean_speed``, ``crashed``, ``on_road``, ``lane_changes``, ``goal``, ``goal_step``, ``steps`` and,
for continuous control, ``mean_abs_steering``), so the last step's metrics, which every EpisodeRecord carries,
summarize it; per-Episode notes ``mean_speed``, ``lane_changes``, ``crash_step``, ``goal_step``,
``mean_abs_steering``.

Caveat (the catalogue's rule, kept): ``highway/lane-keeping``'s reward ``1 - (lateral offset / lane width)^2`` is
unbounded below, so a Policy that drifts away (the neutral baseline scores about -1,412 over 200 steps) does worse
than a failed Episode (-200).

Nothing here imports highway-env at module import time: the factories call ``EXTRA.require`` first.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import gymnasium as gym
import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import BenchmarkPrograms, CatalogEntry, EpisodeRecord, Extra

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "HighwayBenchmark",
    "HighwayConfig",
    "HighwayTask",
    "make_highway_task",
]

EXTRA: Final = Extra("highway", ("highway_env",))

_RENDERING_KEYS: Final = frozenset(
    {
        "screen_width",
        "screen_height",
        "centering_position",
        "scaling",
        "show_trajectories",
        "render_agent",
        "offscreen_rendering",
        "manual_control",
        "real_time_rendering",
    }
)
"""Config keys that only affect rendering (one reads an environment variable): left out of the parameters."""

_KINEMATICS_DEFAULTS: Final = {
    "features": ["presence", "x", "y", "vx", "vy"],
    "vehicles_count": 5,
    "absolute": False,
    "normalize": True,
    "clip": True,
    "see_behind": False,
    "order": "sorted",
}
"""highway-env's KinematicObservation defaults, written out so that the parameters say them."""

_DISCRETE_5: Final = "Discrete(5) meta-actions: 0 LANE_LEFT, 1 IDLE, 2 LANE_RIGHT, 3 FASTER, 4 SLOWER"


@dataclass(frozen=True, slots=True)
class HighwayTask:
    """One highway-env task: its environment id, step limit, observation and action in words, Programs."""

    task: str
    env_id: str
    steps: int
    goal: str
    observation: str
    action: str
    heuristic: str
    features_range: dict[str, list[float]] | None = None
    """Written into a Kinematics observation config where highway-env would derive it from the road."""

    @property
    def name(self) -> str:
        return f"highway/{self.task}"


_KINEMATICS_5: Final = (
    "Kinematics float32 [5, 5]: one row per vehicle (row 0 the ego vehicle, then the nearest), columns "
    "[presence, x, y, vx, vy], normalized to [-1, 1] by config.observation.features_range; other vehicles relative "
    "to the ego vehicle"
)
_KINEMATICS_15: Final = (
    "Kinematics float32 [15, 7]: one row per vehicle (row 0 the ego vehicle), columns [presence, x, y, vx, vy, "
    "cos_h, sin_h], normalized to [-1, 1] by config.observation.features_range"
)
_TTC: Final = (
    "TimeToCollision float32 [3, {h}]: for each ego speed index (slower, current, faster) x lane (left, current, "
    "right) x time step of the next {h} s, 1 where a collision is predicted"
)

TASKS: Final = (
    HighwayTask(
        "highway",
        "highway-v0",
        40,
        "drive fast on a four-lane highway without crashing, preferring the right lane",
        _KINEMATICS_5,
        _DISCRETE_5,
        "highway-heuristic",
        {"x": [-200.0, 200.0], "y": [-16.0, 16.0], "vx": [-80.0, 80.0], "vy": [-80.0, 80.0]},
    ),
    HighwayTask(
        "merge",
        "merge-v1",
        40,
        "let a vehicle merge from the access ramp while keeping speed, without crashing",
        _KINEMATICS_5,
        _DISCRETE_5,
        "highway-heuristic",
        {"x": [-200.0, 200.0], "y": [-8.0, 8.0], "vx": [-80.0, 80.0], "vy": [-80.0, 80.0]},
    ),
    HighwayTask(
        "roundabout",
        "roundabout-v1",
        11,
        "drive through a busy roundabout fast without crashing",
        _KINEMATICS_5 + " (absolute coordinates)",
        _DISCRETE_5,
        "highway-heuristic",
    ),
    HighwayTask(
        "intersection",
        "intersection-v2",
        13,
        "cross a busy intersection (turning left) and reach the exit without crashing",
        _KINEMATICS_15 + " (absolute coordinates)",
        "Discrete(3) longitudinal meta-actions: 0 SLOWER, 1 IDLE, 2 FASTER (the route is fixed)",
        "highway-intersection-heuristic",
    ),
    HighwayTask(
        "two-way",
        "two-way-v0",
        15,
        "overtake on a two-way road without hitting oncoming traffic",
        _TTC.format(h=5).replace("[3, 5]", "[3, 3, 5]"),
        _DISCRETE_5,
        "highway-ttc-heuristic",
    ),
    HighwayTask(
        "exit",
        "exit-v1",
        18,
        "reach the highway exit on the right, fast and without crashing",
        _KINEMATICS_15 + "; other vehicles relative to the ego vehicle",
        _DISCRETE_5,
        "highway-heuristic",
        {"x": [-200.0, 200.0], "y": [-24.0, 24.0], "vx": [-80.0, 80.0], "vy": [-80.0, 80.0]},
    ),
    HighwayTask(
        "u-turn",
        "u-turn-v1",
        10,
        "drive through a U-turn fast while overtaking slower vehicles, without crashing",
        _TTC.format(h=16).replace("[3, 16]", "[3, 3, 16]"),
        _DISCRETE_5,
        "highway-ttc-heuristic",
    ),
    HighwayTask(
        "parking",
        "parking-v0",
        500,
        "park in the goal spot with the goal heading (goal-conditioned continuous control)",
        "Dict of float64 [6] arrays observation / achieved_goal / desired_goal, each [x, y, vx, vy, cos_h, sin_h] "
        "scaled by [100, 100, 5, 5, 1, 1]; achieved_goal equals observation",
        "Box float32 [2] in [-1, 1]: [acceleration, steering]",
        "highway-parking-heuristic",
    ),
    HighwayTask(
        "racetrack",
        "racetrack-v1",
        1500,
        "follow a winding racetrack, staying centred in the lane and on the road",
        "OccupancyGrid float32 [2, 12, 12]: layers [presence of vehicles, on_road], 3 m cells covering +-18 m, "
        "aligned with the ego vehicle (first grid axis forward, second to the right)",
        "Box float32 [1] in [-1, 1]: steering (the speed is controlled)",
        "highway-racetrack-heuristic",
    ),
    HighwayTask(
        "lane-keeping",
        "lane-keeping-v0",
        200,
        "keep a dynamic bicycle model on a sine-shaped lane",
        "Dict of float64 [4, 1] arrays state / derivative / reference_state; state = [lateral position y, heading "
        "psi, lateral speed v, yaw rate r] (noisy), reference_state = [y of the lane centre, lane heading, 0, 0]",
        "Box float32 [1] in [-1, 1]: steering, scaled to +-60 degrees",
        "highway-lane-keeping-heuristic",
    ),
)
"""The ten single-agent tasks, in catalogue order."""


class HighwayConfig(GymConfig):
    """Configuration of a ``highway/*`` Benchmark: the step limit (default: the task's)."""


def _explicit_config(task: HighwayTask) -> dict[str, Any]:
    """The environment's full default configuration without rendering keys, as plain JSON data."""
    env = gym.make(task.env_id, disable_env_checker=True)
    try:
        unwrapped: Any = env.unwrapped
        config = dict(type(unwrapped).default_config())
    finally:
        env.close()
    explicit: dict[str, Any] = json.loads(json.dumps({k: v for k, v in config.items() if k not in _RENDERING_KEYS}))
    observation = explicit["observation"]
    if observation.get("type") == "Kinematics":
        explicit["observation"] = {**_KINEMATICS_DEFAULTS, **observation}
    if task.features_range is not None:
        explicit["observation"] = {**explicit["observation"], "features_range": task.features_range}
    return explicit


def _step_facts(
    totals: dict[str, Any],
    env: Any,
    task: str,
    continuous: bool,
    action: Any,
    info: Mapping[str, Any],
    terminated: bool,
) -> dict[str, float]:
    """What Feedback reports of the ego vehicle so far, after this step; ``totals`` holds the previous step's
    ``metrics`` and the ego ``lane``.

    The metrics are cumulative, so the last step's metrics (which every EpisodeRecord carries, with or without its
    trajectory) summarize the Episode.
    """
    before: dict[str, float] = totals["metrics"]
    vehicle = env.vehicle
    steps = before.get("steps", 0.0) + 1.0
    speed = float(vehicle.speed)
    crashed = bool(vehicle.crashed)
    lane = _lane(vehicle)
    changed = lane is not None and totals["lane"] is not None and lane != totals["lane"]
    totals["lane"] = lane if lane is not None else totals["lane"]
    goal = before.get("goal", 0.0) > 0.0 or _goal(env, task, info, terminated, crashed)
    metrics = {
        "steps": steps,
        "speed": round(speed, 6),
        "mean_speed": round(before.get("mean_speed", 0.0) + (speed - before.get("mean_speed", 0.0)) / steps, 6),
        "crashed": float(crashed or before.get("crashed", 0.0) > 0.0),
        "on_road": float(bool(vehicle.on_road)),
        "lane_changes": before.get("lane_changes", 0.0) + float(changed),
        "goal": float(goal),
        "goal_step": before.get("goal_step") or (steps if goal else 0.0),
    }
    if continuous:
        steering = abs(float(np.asarray(action, dtype=np.float64).reshape(-1)[-1]))
        previous = before.get("mean_abs_steering", 0.0)
        metrics["mean_abs_steering"] = round(previous + (steering - previous) / steps, 6)
    totals["metrics"] = metrics
    return metrics


def _lane(vehicle: Any) -> int | None:
    lane_index = getattr(vehicle, "lane_index", None)
    if isinstance(lane_index, tuple) and len(lane_index) == 3 and isinstance(lane_index[2], int):
        return lane_index[2]
    return None


def _goal(env: Any, task: str, info: Mapping[str, Any], terminated: bool, crashed: bool) -> bool:
    """Whether the task's goal is reached at this step."""
    if task == "intersection":
        return bool(env.has_arrived(env.vehicle))
    if task in ("parking", "exit"):
        return bool(info.get("is_success", False))
    if task == "merge":
        return terminated and not crashed
    return False


_EVIDENCE: Final = VisualEvidence(episodes=1, frames=12, tile_width=150)
"""A contact sheet of the first training Episode per Feedback, rendered in the Host by pygame (one: re-simulating
highway-env costs as much as the Episode did; lane-keeping has none: its renderer is not available upstream)."""


class HighwayBenchmark(GymBenchmark):
    """A highway-env task; outcomes ``crashed`` / ``arrived`` / ``left_road`` / ``timed_out``."""

    def __init__(self, task: GymTask, short_name: str) -> None:
        self._short = short_name
        super().__init__(task)

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals.update(metrics={}, lane=_lane(env.vehicle))

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """The ego vehicle's facts so far (see :func:`_step_facts`)."""
        continuous = not isinstance(self.action_space, gym.spaces.Discrete)
        return dict(
            _step_facts(step.totals, step.env, self._short, continuous, step.env_action, step.info, step.terminated)
        )

    def outcome(self, record: EpisodeRecord) -> str:
        metrics = record.final_metrics
        if metrics.get("crashed"):
            return "crashed"
        if metrics.get("goal"):
            return "arrived"
        if record.terminated and metrics and not metrics.get("on_road", 1.0):
            return "left_road"
        return "timed_out" if record.truncated else "terminated"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        metrics = record.final_metrics
        notes = {k: float(metrics[k]) for k in ("mean_speed", "lane_changes", "mean_abs_steering") if k in metrics}
        if metrics.get("crashed"):
            notes["crash_step"] = float(record.steps)
        if metrics.get("goal_step"):
            notes["goal_step"] = float(metrics["goal_step"])
        return notes


def _programs(task: HighwayTask) -> BenchmarkPrograms:
    return BenchmarkPrograms(baseline=PROGRAMS_DIR / "highway-baseline", heuristic=PROGRAMS_DIR / task.heuristic)


def make_highway_task(task: HighwayTask, **config: Any) -> HighwayBenchmark:
    """Build ``task`` (after checking the ``highway`` extra is installed)."""
    EXTRA.require(task.name)
    cfg = HighwayConfig.model_validate(config)
    importlib.import_module("highway_env")  # registers the environment ids with gymnasium

    steps = cfg.max_episode_steps or task.steps
    worst = float(-steps)
    failure_note = f"Episodes the Policy failed count as {worst:g}; infra faults are left out"
    return HighwayBenchmark(
        GymTask(
            benchmark_id=task.name,
            programs=_programs(task),
            gymnasium_id=task.env_id,
            description=(
                f"highway-env {task.env_id}: {task.goal}. Observation: {task.observation}. Action: {task.action}. "
                f"Reward: highway-env's per-step reward for this task; Episodes end on a crash (or the task's own "
                f"end) and are truncated after {steps} steps. The full environment config is in the parameters "
                f"(config). Score (mean_return, maximize): mean Episode return; {failure_note}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {failure_note}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={"config": _explicit_config(task)},
            metadata={"source": "highway-env", "highway_env_version": _version()},
            visual_evidence=None if task.name == "highway/lane-keeping" else _EVIDENCE,
        ),
        task.task,
    )


def _version() -> str:
    from importlib.metadata import version

    return version("highway-env")


def _factory(task: HighwayTask) -> Any:
    def factory(**config: Any) -> HighwayBenchmark:
        return make_highway_task(task, **config)

    factory.__name__ = f"make_highway_{task.task.replace('-', '_')}"
    factory.__doc__ = f"``{task.name}`` ({task.env_id}): {task.goal}."
    factory.config_model = HighwayConfig  # type: ignore[attr-defined]
    return factory


BENCHMARKS: Final = {task.name: _factory(task) for task in TASKS}
CATALOG: Final = tuple(
    CatalogEntry(name=task.name, family="highway", summary=f"{task.env_id}: {task.goal}", extra=EXTRA) for task in TASKS
)
