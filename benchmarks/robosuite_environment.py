"""The worker's side of the robosuite family: :func:`load_upstream` makes the upstream environment and
:class:`RobosuiteEnvironment` steps one Episode of it, in the family's own venv (only these import ``robosuite``).

The field layouts, the staged reward names and the distance fields are shared with the Host's side
(:mod:`evoledger.benchmarks.robosuite_manipulation`), which builds the Benchmarks and their Feedback from the same
static table without importing ``robosuite``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from evoledger.benchmarks.gym_spaces import check_action
from evoledger.benchmarks.robosuite_tasks import CONTROL_FREQUENCY, RobosuiteTask
from evoledger.kernel.authoring import EpisodeSpec, Step
from evoledger.ledger.errors import InfraError

if TYPE_CHECKING:
    from evoledger.benchmarks.robosuite_manipulation import RobosuiteBenchmark

__all__ = ["SATURATED", "STAGES", "RobosuiteEnvironment", "load_upstream", "stages"]

SATURATED: Final = 0.999
"""An action component at or beyond this fraction of its bound counts as saturated."""
STAGES: Final = {"Stack": ("reach", "lift", "stack"), "PickPlace": ("reach", "grasp", "lift", "hover")}
"""Upstream's staged reward components (``env.staged_rewards()``) by environment prefix (NutAssembly* has
PickPlace's four); the dense reward is built from them."""


def _layout(fields: Sequence[tuple[str, int]]) -> dict[str, list[int]]:
    layout: dict[str, list[int]] = {}
    start = 0
    for name, size in fields:
        layout[name] = [start, start + size]
        start += size
    return layout


def _distance_fields(facts: RobosuiteTask) -> list[tuple[str, int]]:
    """``(field, start)`` of the object fields that are 3-vector offsets (``gripper_to_cube_pos``, ...)."""
    layout = _layout(facts.objects)
    return [(name, layout[name][0]) for name, size in facts.objects if size == 3 and "_to_" in name]


def stages(facts: RobosuiteTask) -> tuple[str, ...]:
    """The names of ``facts``' staged reward components (empty where upstream has none)."""
    if facts.env.startswith(("PickPlace", "NutAssembly")):
        return STAGES["PickPlace"]
    return STAGES.get(facts.env, ())


def _eef_starts(facts: RobosuiteTask) -> list[int]:
    layout = _layout(facts.proprioception)
    return [start for name, (start, _) in layout.items() if name.endswith("_eef_pos")]


def _errors_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR


def load_upstream(facts: RobosuiteTask, seed: int, max_episode_steps: int) -> Any:
    """The upstream environment of ``facts``, seeded from ``seed`` (kept to 32 bits); imports ``robosuite``, so only
    a worker in the family's environment calls it. Upstream's prints go to stderr, never the worker's stdout, and its
    log keeps only errors: its warnings (no private macro file, controller parts a Panda lacks, ...) would otherwise
    fill the terminal of every command on every Episode."""
    os.environ.setdefault("MUJOCO_GL", "disable")  # no rendering here
    upstream_log = logging.getLogger("robosuite_logs")  # robosuite sets its level on import; a filter stays
    if _errors_only not in upstream_log.filters:
        upstream_log.addFilter(_errors_only)
    with contextlib.redirect_stdout(sys.stderr):
        import robosuite
        from robosuite.controllers import load_composite_controller_config

        two = facts.robots == 2
        return robosuite.make(
            facts.env,
            robots=["Panda"] * facts.robots,
            controller_configs=load_composite_controller_config(controller="BASIC", robot="Panda"),
            has_renderer=False,
            has_offscreen_renderer=False,
            use_camera_obs=False,
            use_object_obs=True,
            reward_shaping=True,
            horizon=max_episode_steps,
            control_freq=CONTROL_FREQUENCY,
            seed=seed % 2**32,
            **({"env_configuration": "opposed"} if two else {}),
        )


class RobosuiteEnvironment:
    """One Episode of a :class:`RobosuiteBenchmark`: a fresh robosuite environment, in the family's venv."""

    def __init__(self, benchmark: RobosuiteBenchmark, episode: EpisodeSpec) -> None:
        self._benchmark = benchmark
        self._facts = benchmark.facts
        self._seed = episode.seed
        self._env: Any = load_upstream(self._facts, self._seed, benchmark.max_episode_steps)
        self._distances = _distance_fields(self._facts)
        self._stages = stages(self._facts)
        self._eefs = _eef_starts(self._facts)
        per_arm = self._facts.actions // self._facts.robots
        self._arm = np.array([i % per_arm < 6 for i in range(self._facts.actions)])  # the OSC deltas, no grippers
        self._started = self._ended = self._closed = False
        self._steps = 0
        self._totals: dict[str, float] = {}
        self._first_success: int | None = None
        self._last_eef: list[np.ndarray[Any, Any]] = []
        self._minimum: dict[str, float] = {}
        self._maximum: dict[str, float] = {}

    def _observation(self, raw: Mapping[str, Any]) -> dict[str, np.ndarray[Any, Any]]:
        proprio = [np.asarray(raw[f"robot{i}_proprio-state"], dtype=np.float64) for i in range(self._facts.robots)]
        return {
            "proprioception": np.concatenate(proprio),
            "objects": np.asarray(raw["object-state"], dtype=np.float64).reshape(-1),
        }

    def reset(self) -> Any:
        """Start the Episode from its seed and return the first observation (a second reset starts it over: the
        environment is made again, so the same seed gives the same Episode)."""
        if self._closed:
            raise InfraError("reset() on a closed robosuite Environment; make a fresh one per Episode")
        if self._started:
            self._env.close()
            self._env = load_upstream(self._facts, self._seed, self._benchmark.max_episode_steps)
        with contextlib.redirect_stdout(sys.stderr):
            observation = self._observation(self._env.reset())
        self._started, self._ended, self._steps, self._first_success = True, False, 0, None
        self._totals = {"success_steps": 0.0, "saturated_steps": 0.0, "abs_action_sum": 0.0, "eef_path": 0.0}
        self._last_eef = [observation["proprioception"][s : s + 3].copy() for s in self._eefs]
        self._minimum, self._maximum = {}, {}
        return observation

    def step(self, action: Any) -> Step:
        """Apply ``action`` (checked strictly against the action space) and return the Step."""
        if not self._started or self._ended or self._closed:
            state = "closed" if self._closed else ("ended" if self._ended else "not reset")
            raise InfraError(f"step() called on a robosuite Environment that is {state}; call reset() first")
        checked = check_action(self._benchmark.action_space, action)
        with contextlib.redirect_stdout(sys.stderr):
            raw, reward, done, _ = self._env.step(checked)
            success = bool(self._env._check_success())
            staged = [float(v) for v in self._env.staged_rewards()] if self._stages else []
        self._steps += 1
        at_horizon = self._steps >= self._benchmark.max_episode_steps
        terminated = bool(done) and not at_horizon
        truncated = not terminated and (bool(done) or at_horizon)
        self._ended = terminated or truncated
        observation = self._observation(raw)
        metrics = self._metrics(observation, success, checked)
        for stage, value in zip(self._stages, staged, strict=True):
            metrics[f"{stage}_reward"] = value
            self._maximum[stage] = max(self._maximum.get(stage, value), value)
            metrics[f"max_{stage}_reward"] = self._maximum[stage]
        return Step(observation, float(reward), terminated, truncated, metrics)

    def _metrics(self, observation: dict[str, Any], success: bool, action: np.ndarray[Any, Any]) -> dict[str, float]:
        totals = self._totals
        totals["success_steps"] += success
        magnitude = np.abs(action)
        totals["saturated_steps"] += bool(np.any(magnitude[self._arm] >= SATURATED))
        totals["abs_action_sum"] += float(magnitude.mean()) if magnitude.size else 0.0
        proprio, objects = observation["proprioception"], observation["objects"]
        for i, start in enumerate(self._eefs):
            eef = proprio[start : start + 3]
            totals["eef_path"] += float(np.linalg.norm(eef - self._last_eef[i]))
            self._last_eef[i] = eef.copy()
        if success and self._first_success is None:
            self._first_success = self._steps
        metrics: dict[str, float] = {"success": float(success), **totals}
        for name, start in self._distances:
            distance = float(np.linalg.norm(objects[start : start + 3]))
            if math.isfinite(distance):
                self._minimum[name] = min(self._minimum.get(name, distance), distance)
                metrics[f"final_{name}_distance"] = distance
                metrics[f"min_{name}_distance"] = self._minimum[name]
        if self._first_success is not None:
            metrics["first_success_step"] = float(self._first_success)
        return metrics

    def close(self) -> None:
        """Close the upstream environment; safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._env.close()
