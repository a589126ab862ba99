"""Gymnasium-Robotics as Benchmarks: ``robotics/<task>``, its 21 profiles (Fetch, Maze, Adroit, Shadow Hand, Kitchen).

Needs the ``robotics`` extra (``pip install 'evoledger[robotics]'``: gymnasium-robotics 1.4.2, MuJoCo physics); this
module imports no gymnasium-robotics, so the names are listed without it and every factory checks the extra first.
Under mujoco 4.0 upstream's joint helpers fail an assertion; :mod:`evoledger.benchmarks.robotics_mujoco4` repairs
exactly that before any environment is made (the physics is untouched).

**Observations** are upstream's: goal-conditioned profiles (Fetch, Maze, Shadow Hand, Kitchen) give a dict of float64
arrays ``observation``, ``achieved_goal``, ``desired_goal`` (the kitchen's goals are dicts by task); Adroit gives one
float64 array. **Actions** are float Boxes in [-1, 1], checked strictly (out of range fails the Episode, nothing is
clipped). The layouts are in each Benchmark's description (:mod:`evoledger.benchmarks.robotics_tasks`).

**Score** (``mean_return``, maximize), by profile:

* Fetch, Maze, Shadow Hand (upstream's measure is success): the **success rate**. An Episode's return is 1 when
  upstream's success flag (``is_success`` / ``success``) holds at its last step, else 0: the reward is 0 on every
  step but the last. Upstream's own (sparse) reward is kept as the step metric ``upstream_reward``. An Episode the
  Policy failed counts 0, like an unsuccessful one.
* Adroit: upstream's dense return; an Episode the Policy failed counts -1,000,000. gymnasium-robotics 1.2.1 changed
  the v1 Adroit rewards without a new version, so these returns are comparable only with gymnasium-robotics
  1.2.1 and later.
* FrankaKitchen: the number of its seven tasks completed (upstream's reward, +1 per newly completed task); an
  Episode the Policy failed counts -1.

Infra faults are left out everywhere.

**Feedback** adds to the shared summary (``feedback_summary``): outcomes ``succeeded`` (success at the last step),
``lost_success`` (success reached, then lost by the end: a regression), ``never_succeeded``; the kitchen's
``all_tasks_done`` / ``some_tasks_done`` / ``no_task_done``. Per-Episode notes: ``succeeded`` (0/1; its mean is the
success rate), ``first_success_step``, ``success_steps``, the final and closest distance between achieved and
desired goal (``final_goal_distance``, ``min_goal_distance``; Shadow Hand manipulation adds ``final_goal_angle`` in
radians), ``upstream_return``, ``action_saturation`` (the share of action components at the bounds), and for the
kitchen ``tasks_completed`` and one ``done_<task>`` flag per task. The same quantities are step metrics, so
``trace.jsonl`` shows them step by step.

**Programs**: every profile shares the zero-action baseline. FetchReach, FetchPush, FetchPickAndPlace and PointMaze
ship a heuristic (:data:`HEURISTICS`) that solved every Episode we tried; FetchSlide's (push the puck up to the
speed that slides it onto the target) and HandReach's (hold the resting joints, bring the thumb and one finger
together from calibrated postures) succeed in 6 to 40 % of Episodes, against 0 for the baseline. Adroit door and
relocate ship a fixed reaching posture that raises the dense return (it solves nothing); Adroit hammer grips the
hammer and lifts it (the lift bonus; the nail is not driven). The kitchen's heuristic follows joint-space waypoints
that turn the bottom burner's knob and the light switch and slide the cabinet open (3 of 7 tasks, every time).
AntMaze's walks the Ant through the maze's cells with a steered sine gait along whichever of its four symmetric
body directions is closest to the way to go, and stands at the goal (15 of 16 Episodes at seeds 3 and 11).
Adroit pen and the nine Shadow-hand manipulation profiles ship the baseline only: no heuristic beats it yet. For the
pen a fixed posture did not hold on other seeds, turning the pen with the wrist toward its target lowered the mean
return, and hill-climbing the wrist, thumb and little-finger targets on the observed orientation similarity (once
the pen has settled, leaving it alone when already within 0.9) scored 711 to 753 against the baseline's 743 over
30 resets: the fingers hardly touch the pen, it tilts about one axis only, and the mean is dominated by the bonus
of the resets whose target happens to lie where the pen settles. The Shadow-hand targets are random full
orientations (success needs 0.1 rad and 1 cm); the zero action ends 0.9 to 3.9 rad from them, and no controller
was scripted for them.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Final

import gymnasium as gym
import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.robotics_tasks import TASKS, RoboticsTask
from evoledger.kernel.authoring import BenchmarkPrograms, CatalogEntry, EpisodeRecord, Extra

__all__ = ["BENCHMARKS", "CATALOG", "EXTRA", "HEURISTICS", "TASKS", "RoboticsBenchmark", "RoboticsTask"]

EXTRA: Final = Extra("robotics", ("gymnasium_robotics",))
"""The optional extra every Benchmark of this module needs."""

HEURISTICS: Final = {
    "fetch-reach": "robotics-fetch-reach-heuristic",
    "fetch-push": "robotics-fetch-push-heuristic",
    "fetch-slide": "robotics-fetch-slide-heuristic",
    "fetch-pick-and-place": "robotics-fetch-pick-and-place-heuristic",
    "adroit-door": "robotics-adroit-posture-heuristic",
    "adroit-hammer": "robotics-adroit-hammer-heuristic",
    "adroit-relocate": "robotics-adroit-posture-heuristic",
    "point-maze-umaze": "robotics-point-maze-heuristic",
    "ant-maze-umaze": "robotics-ant-maze-heuristic",
    "hand-reach": "robotics-hand-reach-heuristic",
    "franka-kitchen": "robotics-franka-kitchen-heuristic",
}
"""The profiles that ship a heuristic Program, and which; every profile shares the zero-action ``robotics-baseline``."""

KITCHEN_TASKS: Final = (
    "bottom burner",
    "hinge cabinet",
    "kettle",
    "light switch",
    "microwave",
    "slide cabinet",
    "top burner",
)
"""FrankaKitchen-v1's seven tasks (all of them are asked for: upstream's default)."""

UMAZE: Final = ((1, 1, 1, 1, 1), (1, 0, 0, 0, 1), (1, 1, 1, 0, 1), (1, 0, 0, 0, 1), (1, 1, 1, 1, 1))
"""The U maze of both maze profiles (rows top to bottom, 1 = wall), public as ``maze_map``."""
MAZE_CELL: Final = {"point-maze-umaze": 1.0, "ant-maze-umaze": 4.0}
"""Each maze profile's cell size in metres, public as ``maze_size_scaling``."""

SATURATED: Final = 0.999
"""An action component at or beyond this magnitude counts as saturated (at the bound)."""


def _success(info: Mapping[str, Any]) -> bool:
    value = info.get("is_success", info.get("success", False))
    try:
        return bool(float(value) > 0.5)
    except (TypeError, ValueError):
        return False


class _SuccessAtEnd(gym.Wrapper):
    """Reward 1 on the last step of an Episode that ends in success, else 0; upstream's reward goes to ``info``."""

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        ended = bool(terminated) or bool(truncated)
        scored = 1.0 if ended and _success(info) else 0.0
        return observation, scored, terminated, truncated, {**info, "upstream_reward": float(reward)}


def _load_robotics() -> None:
    """Register gymnasium-robotics' environments and repair its joint helpers under mujoco 4 (once per process)."""
    from evoledger.benchmarks.robotics_mujoco4 import repair_joint_helpers

    # On import upstream prints a notice to stderr (Adroit's v1 rewards changed in gymnasium-robotics 1.2.1; the
    # module docstring says so) and may warn: neither belongs in a Policy's or a command's output.
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        import gymnasium_robotics

        gym.register_envs(gymnasium_robotics)
    repair_joint_helpers()


class RoboticsBenchmark(GymBenchmark):
    """A Gymnasium-Robotics profile: reward, outcomes, notes and step metrics as the module docstring says."""

    def __init__(self, facts: RoboticsTask, task: GymTask) -> None:
        self._facts = facts
        super().__init__(task)

    @property
    def facts(self) -> RoboticsTask:
        """The profile's fixed facts."""
        return self._facts

    def _make_gym_env(self, **overrides: Any) -> Any:
        _load_robotics()
        with warnings.catch_warnings():  # upstream warns about deprecated MuJoCo calls on reset
            warnings.simplefilter("ignore")
            env = super()._make_gym_env(**overrides)
        return _SuccessAtEnd(env) if self._facts.score_kind == "success" else env

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals.update(
            steps=0, success_steps=0, first_success=-1.0, min_distance=math.inf, upstream=0.0, saturated=0, parts=0
        )
        totals["done"] = set()

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """This step's metrics (names in the module docstring); updates the Episode's totals."""
        t = step.totals
        t["steps"] += 1
        success = _success(step.info)
        if success:
            t["success_steps"] += 1
            if t["first_success"] < 0:
                t["first_success"] = float(t["steps"])
        action = np.asarray(step.env_action, dtype=np.float64).ravel()
        t["saturated"] += int(np.count_nonzero(np.abs(action) >= SATURATED))
        t["parts"] += action.size
        t["upstream"] += float(step.info.get("upstream_reward", step.reward))
        metrics = {
            "success": 1.0 if success else 0.0,
            "success_steps": float(t["success_steps"]),
            "first_success_step": t["first_success"],
            "upstream_reward": float(step.info.get("upstream_reward", step.reward)),
            "upstream_return": t["upstream"],
            "action_saturation": t["saturated"] / max(1, t["parts"]),
        }
        if self._facts.kind == "kitchen":
            t["done"].update(str(name) for name in step.info.get("episode_task_completions", ()))
            metrics["tasks_completed"] = float(len(t["done"]))
            metrics.update({f"done_{name.replace(' ', '_')}": float(name in t["done"]) for name in KITCHEN_TASKS})
            return metrics
        distance = self._goal_distance(step.env, step.observation)
        if distance is not None:
            t["min_distance"] = min(t["min_distance"], distance[0])
            metrics["goal_distance"] = distance[0]
            metrics["min_goal_distance"] = t["min_distance"]
            if distance[1] is not None:
                metrics["goal_angle"] = distance[1]
        return metrics

    def _goal_distance(self, env: Any, observation: Any) -> tuple[float, float | None] | None:
        if not isinstance(observation, Mapping) or "achieved_goal" not in observation:
            return None
        achieved = np.asarray(observation["achieved_goal"], dtype=np.float64)
        desired = np.asarray(observation["desired_goal"], dtype=np.float64)
        if self._facts.kind == "hand-manipulate":
            position, angle = env._goal_distance(achieved, desired)
            return float(position), float(angle)
        return float(np.linalg.norm(achieved - desired)), None

    # Feedback hooks -------------------------------------------------------------------------------------------

    def outcome(self, record: EpisodeRecord) -> str:
        m = record.final_metrics
        if self._facts.kind == "kitchen":
            done = int(m.get("tasks_completed", 0.0))
            return "all_tasks_done" if done >= len(KITCHEN_TASKS) else ("some_tasks_done" if done else "no_task_done")
        if m.get("success", 0.0) >= 0.5:
            return "succeeded"
        return "lost_success" if m.get("success_steps", 0.0) > 0 else "never_succeeded"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        m = record.final_metrics
        notes: dict[str, float] = {}
        if self._facts.kind != "kitchen":
            notes["succeeded"] = 1.0 if m.get("success", 0.0) >= 0.5 else 0.0
        keys = {
            "first_success_step": "first_success_step",
            "success_steps": "success_steps",
            "final_goal_distance": "goal_distance",
            "min_goal_distance": "min_goal_distance",
            "final_goal_angle": "goal_angle",
            "upstream_return": "upstream_return",
            "action_saturation": "action_saturation",
            "tasks_completed": "tasks_completed",
            **{f"done_{n.replace(' ', '_')}": f"done_{n.replace(' ', '_')}" for n in KITCHEN_TASKS},
        }
        for note, metric in keys.items():
            if metric in m:
                notes[note] = float(m[metric])
        return notes


def _build(facts: RoboticsTask, config: Mapping[str, Any]) -> RoboticsBenchmark:
    EXTRA.require(facts.name)
    cfg = GymConfig.model_validate(dict(config))
    steps = cfg.max_episode_steps or facts.steps
    worst = facts.failure_return
    scored = {
        "success": "success rate: an Episode's return is 1 when upstream's success flag holds at its last step, "
        "else 0 (the reward is 0 on every other step; upstream's reward is the step metric upstream_reward)",
        "return": "mean Episode return (upstream's dense reward)",
        "tasks": "mean number of kitchen tasks completed (upstream's reward: +1 per newly completed task)",
    }[facts.score_kind]
    rule = f"{scored}; Episodes the Policy failed count as {worst:g}; infra faults are left out"
    description = (
        f"Gymnasium-Robotics {facts.task} ({facts.gymnasium_id}, gymnasium-robotics, MuJoCo physics): "
        f"{facts.summary}. {facts.observation} Episodes are truncated after {steps} steps. Score (mean_return, "
        f"maximize): {rule}. Settings (--set): max_episode_steps."
    )
    heuristic = HEURISTICS.get(facts.task)
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "robotics-baseline",
        heuristic=None if heuristic is None else PROGRAMS_DIR / heuristic,
    )
    public: dict[str, Any] = {}
    if facts.task in MAZE_CELL:
        public = {"maze_map": [list(row) for row in UMAZE], "maze_size_scaling": MAZE_CELL[facts.task]}
    task = GymTask(
        benchmark_id=facts.name,
        gymnasium_id=facts.gymnasium_id,
        description=description,
        primary_metric="mean_return",
        score_rule=rule,
        failure_return=worst,
        max_episode_steps=steps,
        public_parameters=public,
        metadata={
            "family": "robotics",
            "robotics_version": _version(),
            "score_kind": facts.score_kind,
            "robotics_extra": EXTRA.install_command,
        },
        programs=programs,
    )
    return RoboticsBenchmark(facts, task)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gymnasium-robotics")
    except PackageNotFoundError:  # pragma: no cover - the extra is checked before
        return "unknown"


def _factory(facts: RoboticsTask) -> Callable[..., RoboticsBenchmark]:
    def make(**config: Any) -> RoboticsBenchmark:
        return _build(facts, config)

    make.__name__ = make.__qualname__ = f"make_{facts.task.replace('-', '_')}"
    make.__doc__ = f"``{facts.name}`` ({facts.gymnasium_id}); settings: max_episode_steps."
    make.config_model = GymConfig  # type: ignore[attr-defined]
    return make


BENCHMARKS: Final[dict[str, Callable[..., RoboticsBenchmark]]] = {t.name: _factory(t) for t in TASKS}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=t.name, family="robotics", summary=f"{t.gymnasium_id}: {t.summary}", extra=EXTRA) for t in TASKS
)
