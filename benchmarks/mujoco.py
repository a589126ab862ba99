"""Gymnasium's MuJoCo v5 tasks as Benchmarks: ``mujoco/<task>`` for all eleven ``<Env>-v5`` environments.

Needs the ``mujoco`` extra (``pip install 'evoledger[mujoco]'``); this module itself imports neither ``mujoco`` nor
Gymnasium's MuJoCo environments, so listing the Benchmarks works without it, and each factory checks the extra
first. Observations are Gymnasium's own: one float64 Box per task (the layout is in each description); actions are
float Boxes checked strictly (out-of-range values fail the Episode, nothing is clipped).

**Score** (``mean_return``, maximize): the mean Episode return (upstream reward); an Episode the Policy failed
(exception, timeout, invalid action, ...) counts as the task's failure return and infra faults are left out. The
failure return is a floor a running Policy does not reach in practice: ``-1000`` for Reacher, Pusher, both
pendulums, Swimmer, Hopper and Walker2d, ``-4000`` for Ant, ``-10000`` for HalfCheetah (it can run backwards fast),
Humanoid and HumanoidStandup, each at the default step limit; it scales with ``max_episode_steps`` (proportionally)
and with any reward weight raised above its default (by the largest ratio), so failing never pays.

**Feedback** adds Benchmark words to the shared summary (``feedback_summary``):

* outcome classes: ``fell`` / ``survived`` (Ant, Hopper, Walker2d, Humanoid: fell = left the healthy range),
  ``moved_forward`` / ``moved_backward`` / ``flipped`` (HalfCheetah, Swimmer), ``stood_up`` (torso above 1 m) /
  ``sat_up`` (above 0.35 m) / ``stayed_down`` (HumanoidStandup), ``balanced`` / ``dropped`` (pendulums),
  ``reached`` / ``missed`` (Reacher: fingertip within 2 cm of the target at the end; Pusher: object within the
  8 cm goal disc at the end);
* per-Episode notes from the last step's metrics: forward distance, mean speed, healthy steps, control cost
  (locomotion); torso heights (standup); balanced steps, largest pole angle or lowest tip (pendulums); final and
  closest distances (Reacher, Pusher);
* step metrics in every trajectory (cumulative where a total is meant), so ``trace.jsonl`` shows them per step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import gymnasium as gym
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymStep, GymTask
from evoledger.benchmarks.mujoco_settings import (
    AntConfig,
    HalfCheetahConfig,
    HopperConfig,
    HumanoidConfig,
    HumanoidStandupConfig,
    InvertedDoublePendulumConfig,
    InvertedPendulumConfig,
    MujocoConfig,
    PusherConfig,
    ReacherConfig,
    SwimmerConfig,
    Walker2dConfig,
    gymnasium_kwargs,
)
from evoledger.benchmarks.mujoco_tasks import TASKS, MujocoTask
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, Extra

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "TASKS",
    "AntConfig",
    "HalfCheetahConfig",
    "HopperConfig",
    "HumanoidConfig",
    "HumanoidStandupConfig",
    "InvertedDoublePendulumConfig",
    "InvertedPendulumConfig",
    "MujocoBenchmark",
    "MujocoConfig",
    "MujocoTask",
    "PusherConfig",
    "ReacherConfig",
    "SwimmerConfig",
    "Walker2dConfig",
    "make_ant",
    "make_half_cheetah",
    "make_hopper",
    "make_humanoid",
    "make_humanoid_standup",
    "make_inverted_double_pendulum",
    "make_inverted_pendulum",
    "make_pusher",
    "make_reacher",
    "make_swimmer",
    "make_walker2d",
]

EXTRA: Final = Extra("mujoco", ("mujoco",))
"""The optional extra every Benchmark of this module needs."""

REACHED_DISTANCE: Final = 0.02
"""Reacher: the fingertip (radius 1 cm) touches the target (radius 0.9 cm) within this distance (m)."""
GOAL_RADIUS: Final = 0.08
"""Pusher: the goal disc's radius (m); an object centre inside it has reached the goal."""
STOOD_UP: Final = 1.0
"""HumanoidStandup: torso height (m) counted as standing (Humanoid-v5's lowest healthy height)."""
SAT_UP: Final = 0.35
"""HumanoidStandup: torso height (m) counted as propped up or sitting (it lies at about 0.1 m)."""


def _get(info: Mapping[str, Any], key: str) -> float:
    value = info.get(key, 0.0)
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


class MujocoBenchmark(GymBenchmark):
    """A Gymnasium MuJoCo v5 task; outcomes, notes and step metrics depend on :attr:`MujocoTask.kind`."""

    def __init__(self, facts: MujocoTask, task: GymTask, upstream: Mapping[str, Any]) -> None:
        self._facts = facts
        self._upstream = dict(upstream)
        self._dt = 0.0
        super().__init__(task)  # builds a probe environment through _make_gym_env, which sets _dt

    @property
    def facts(self) -> MujocoTask:
        """The task's fixed facts."""
        return self._facts

    @property
    def dt(self) -> float:
        """Seconds of simulated time per Environment step (``frame_skip`` physics steps)."""
        return self._dt

    def _make_gym_env(self, **overrides: Any) -> Any:
        env: Any = gym.make(
            self._facts.gymnasium_id,
            max_episode_steps=self.task.max_episode_steps,
            disable_env_checker=True,
            **{**self._upstream, **overrides},
        )
        self._dt = float(env.unwrapped.dt)
        return env

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals.update(self.start_totals(env, info))

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        return self.track(step.totals, step.env, step.info)

    # Step metrics ---------------------------------------------------------------------------------------------

    def start_totals(self, env: Any, info: Mapping[str, Any]) -> dict[str, float]:
        """The running totals of a freshly reset Episode."""
        return {"x0": _get(info, "x_position"), "control": 0.0, "healthy": 0.0, "extreme": math.nan}

    def track(self, totals: dict[str, float], env: Any, info: Mapping[str, Any]) -> dict[str, float]:
        """This step's metrics; updates ``totals``. Names are documented in the module docstring."""
        kind = self._facts.kind
        control = -(_get(info, "reward_ctrl") + _get(info, "reward_quadctrl"))
        totals["control"] += control
        if kind in ("walker", "runner"):
            metrics = {
                "x_position": _get(info, "x_position"),
                "forward_distance": _get(info, "x_position") - totals["x0"],
                "x_velocity": _get(info, "x_velocity"),
                "control_cost": totals["control"],
            }
            if kind == "walker":
                healthy = float(bool(env.is_healthy))
                totals["healthy"] += healthy
                metrics["healthy"] = healthy
                metrics["healthy_steps"] = totals["healthy"]
            else:
                metrics["body_angle"] = float(env.data.qpos[2])
            return metrics
        if kind == "standup":
            height = float(env.data.qpos[2])
            totals["healthy"] += height  # the running sum of heights
            totals["steps"] = totals.get("steps", 0.0) + 1.0
            totals["extreme"] = height if math.isnan(totals["extreme"]) else max(totals["extreme"], height)
            return {
                "torso_height": height,
                "max_torso_height": totals["extreme"],
                "mean_torso_height": totals["healthy"] / totals["steps"],
                "control_cost": totals["control"],
            }
        if kind == "pendulum":
            angle = abs(float(env.data.qpos[1]))
            totals["extreme"] = angle if math.isnan(totals["extreme"]) else max(totals["extreme"], angle)
            return {"cart_position": float(env.data.qpos[0]), "pole_angle": angle, "max_pole_angle": totals["extreme"]}
        if kind == "double-pendulum":
            tip = float(env.data.site_xpos[0][2])
            totals["extreme"] = tip if math.isnan(totals["extreme"]) else min(totals["extreme"], tip)
            return {"cart_position": float(env.data.qpos[0]), "tip_height": tip, "min_tip_height": totals["extreme"]}
        if kind == "reacher":
            distance = float(math.dist(env.get_body_com("fingertip")[:2], env.get_body_com("target")[:2]))
            totals["extreme"] = distance if math.isnan(totals["extreme"]) else min(totals["extreme"], distance)
            return {"distance": distance, "min_distance": totals["extreme"], "control_cost": totals["control"]}
        # pusher
        obj, goal, tip = env.get_body_com("object"), env.get_body_com("goal"), env.get_body_com("tips_arm")
        to_goal = float(math.dist(obj[:2], goal[:2]))
        totals["extreme"] = to_goal if math.isnan(totals["extreme"]) else min(totals["extreme"], to_goal)
        return {
            "object_to_goal": to_goal,
            "min_object_to_goal": totals["extreme"],
            "gripper_to_object": float(math.dist(tip, obj)),
            "control_cost": totals["control"],
        }

    # Feedback hooks -------------------------------------------------------------------------------------------

    def outcome(self, record: EpisodeRecord) -> str:
        m, kind = record.final_metrics, self._facts.kind
        if kind == "walker":
            return "fell" if record.terminated or m.get("healthy", 1.0) < 0.5 else "survived"
        if kind == "runner":
            if self._facts.task == "half-cheetah" and math.cos(float(m.get("body_angle", 0.0))) < 0:
                return "flipped"
            return "moved_forward" if float(m.get("forward_distance", 0.0)) > 0 else "moved_backward"
        if kind == "standup":
            top = float(m.get("max_torso_height", 0.0))
            return "stood_up" if top >= STOOD_UP else ("sat_up" if top >= SAT_UP else "stayed_down")
        if kind in ("pendulum", "double-pendulum"):
            return "dropped" if record.terminated else "balanced"
        if kind == "reacher":
            return "reached" if float(m.get("distance", math.inf)) <= REACHED_DISTANCE else "missed"
        return "reached" if float(m.get("object_to_goal", math.inf)) <= GOAL_RADIUS else "missed"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        m, kind = record.final_metrics, self._facts.kind
        keys: dict[str, str] = {}
        notes: dict[str, float] = {}
        if kind in ("walker", "runner"):
            keys = {"forward_distance": "forward_distance", "control_cost": "control_cost"}
            if "forward_distance" in m and record.steps > 0:
                notes["mean_speed"] = float(m["forward_distance"]) / (record.steps * self._dt)
            if kind == "walker":
                keys["healthy_steps"] = "healthy_steps"
        elif kind == "standup":
            keys = {
                "final_torso_height": "torso_height",
                "max_torso_height": "max_torso_height",
                "mean_torso_height": "mean_torso_height",
                "control_cost": "control_cost",
            }
        elif kind in ("pendulum", "double-pendulum"):
            notes["balanced_steps"] = float(record.steps - (1 if record.terminated else 0))
            keys = {"max_pole_angle": "max_pole_angle", "min_tip_height": "min_tip_height"}
        elif kind == "reacher":
            keys = {"final_distance": "distance", "min_distance": "min_distance", "control_cost": "control_cost"}
        else:
            keys = {
                "final_object_to_goal": "object_to_goal",
                "min_object_to_goal": "min_object_to_goal",
                "final_gripper_to_object": "gripper_to_object",
                "control_cost": "control_cost",
            }
        for note, metric in keys.items():
            if metric in m:
                notes[note] = float(m[metric])
        return notes


def _build(facts: MujocoTask, config: Mapping[str, Any]) -> MujocoBenchmark:
    EXTRA.require(facts.name)
    cfg = facts.config.model_validate(dict(config))
    steps = cfg.max_episode_steps or facts.default_steps
    worst = facts.failure_return(cfg, steps)
    public, upstream = gymnasium_kwargs(cfg)
    rule = f"mean return; Episodes the Policy failed count as {worst:g}; infra faults are left out"
    description = (
        f"{facts.summary} (gymnasium {facts.gymnasium_id}, MuJoCo physics). {facts.details} Episodes are truncated "
        f"after {steps} steps. Score (mean_return, maximize): mean Episode return; Episodes the Policy failed count "
        f"as {worst:g}; infra faults are left out. Settings (--set): max_episode_steps and "
        f"{', '.join(sorted(public))}."
    )
    task = GymTask(
        benchmark_id=facts.name,
        gymnasium_id=facts.gymnasium_id,
        description=description,
        primary_metric="mean_return",
        score_rule=rule,
        failure_return=worst,
        max_episode_steps=steps,
        env_kwargs=public,
        metadata={"family": "mujoco", "mujoco_extra": EXTRA.install_command},
        programs=shipped(f"mujoco-{facts.task}", baseline="mujoco-baseline"),  # one zero-action baseline for all
    )
    return MujocoBenchmark(facts, task, upstream)


_BY_TASK: Final = {t.task: t for t in TASKS}


def make_ant(**config: Any) -> MujocoBenchmark:
    """``mujoco/ant`` (Ant-v5); settings: :class:`AntConfig`."""
    return _build(_BY_TASK["ant"], config)


def make_half_cheetah(**config: Any) -> MujocoBenchmark:
    """``mujoco/half-cheetah`` (HalfCheetah-v5); settings: :class:`HalfCheetahConfig`."""
    return _build(_BY_TASK["half-cheetah"], config)


def make_hopper(**config: Any) -> MujocoBenchmark:
    """``mujoco/hopper`` (Hopper-v5); settings: :class:`HopperConfig`."""
    return _build(_BY_TASK["hopper"], config)


def make_humanoid(**config: Any) -> MujocoBenchmark:
    """``mujoco/humanoid`` (Humanoid-v5); settings: :class:`HumanoidConfig`."""
    return _build(_BY_TASK["humanoid"], config)


def make_humanoid_standup(**config: Any) -> MujocoBenchmark:
    """``mujoco/humanoid-standup`` (HumanoidStandup-v5); settings: :class:`HumanoidStandupConfig`."""
    return _build(_BY_TASK["humanoid-standup"], config)


def make_inverted_double_pendulum(**config: Any) -> MujocoBenchmark:
    """``mujoco/inverted-double-pendulum`` (InvertedDoublePendulum-v5); :class:`InvertedDoublePendulumConfig`."""
    return _build(_BY_TASK["inverted-double-pendulum"], config)


def make_inverted_pendulum(**config: Any) -> MujocoBenchmark:
    """``mujoco/inverted-pendulum`` (InvertedPendulum-v5); settings: :class:`InvertedPendulumConfig`."""
    return _build(_BY_TASK["inverted-pendulum"], config)


def make_pusher(**config: Any) -> MujocoBenchmark:
    """``mujoco/pusher`` (Pusher-v5); settings: :class:`PusherConfig`."""
    return _build(_BY_TASK["pusher"], config)


def make_reacher(**config: Any) -> MujocoBenchmark:
    """``mujoco/reacher`` (Reacher-v5); settings: :class:`ReacherConfig`."""
    return _build(_BY_TASK["reacher"], config)


def make_swimmer(**config: Any) -> MujocoBenchmark:
    """``mujoco/swimmer`` (Swimmer-v5); settings: :class:`SwimmerConfig`."""
    return _build(_BY_TASK["swimmer"], config)


def make_walker2d(**config: Any) -> MujocoBenchmark:
    """``mujoco/walker2d`` (Walker2d-v5); settings: :class:`Walker2dConfig`."""
    return _build(_BY_TASK["walker2d"], config)


BENCHMARKS: Final[dict[str, Callable[..., MujocoBenchmark]]] = {
    "mujoco/ant": make_ant,
    "mujoco/half-cheetah": make_half_cheetah,
    "mujoco/hopper": make_hopper,
    "mujoco/humanoid": make_humanoid,
    "mujoco/humanoid-standup": make_humanoid_standup,
    "mujoco/inverted-double-pendulum": make_inverted_double_pendulum,
    "mujoco/inverted-pendulum": make_inverted_pendulum,
    "mujoco/pusher": make_pusher,
    "mujoco/reacher": make_reacher,
    "mujoco/swimmer": make_swimmer,
    "mujoco/walker2d": make_walker2d,
}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=t.name, family="mujoco", summary=t.summary, extra=EXTRA) for t in TASKS
)
