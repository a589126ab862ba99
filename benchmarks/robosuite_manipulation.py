"""robosuite's Panda manipulation environments as Benchmarks: ``robosuite/<env>`` for the 19 registered ones.

**An environment of its own.** robosuite 1.5.2 pins numpy < 2 (the main environment has numpy 2) and needs MuJoCo
3.3 (on MuJoCo 4 every environment fails while loading its robot), so the family runs in a venv of its own:
``evoledger env install robosuite`` makes it and the family's workers start from its interpreter. The Host (CLI,
ledger, Agent, Feedback, scoring) never imports ``robosuite``: the spaces, the spec, the Episode plan and the
Feedback come from the static table in :mod:`evoledger.benchmarks.robosuite_tasks`; only
:meth:`RobosuiteBenchmark.make_environment` (called in a worker) imports ``robosuite``, through the worker's side
of the family, :mod:`evoledger.benchmarks.robosuite_environment`.

**Environment**: ``robosuite.make`` with Panda arm(s) (two ``opposed`` for ``TwoArm*``), the BASIC composite
controller (OSC_POSE arm, plus the gripper), object observations on, no camera observations and no renderer,
``reward_shaping=True``, ``horizon=max_episode_steps`` and ``seed`` = the Episode's Host-owned seed (kept to 32
bits), which places the objects.

**Observation**: a dict of two float64 vectors: ``proprioception`` (every arm's ``proprio-state``: joint
positions, their cos/sin, velocities, accelerations, end-effector position and quaternions, gripper joints) and
``objects`` (upstream ``object-state``). Where each field lies is in ``context.metadata["proprioception_fields"]``
and ``["object_fields"]`` (``name: [start, stop]``). **Action**: float64 in [-1, 1] per component, per arm 6
OSC_POSE deltas (position x, y, z, then axis-angle rotation) and, with a gripper, 1 gripper command (-1 opens, 1
closes); checked strictly (out of range or NaN fails the Episode with ``invalid_action``; nothing is clipped).

**Score** (``mean_return``, maximize): the mean Episode return of upstream's dense (shaped) reward, normalised by
robosuite to at most 1 per step (``tool-hang`` and ``two-arm-transport`` have only their sparse reward, 1 per step
of success: upstream's ``reward_shaping`` changes nothing there); an Episode the Policy failed counts as
:data:`FAILURE_RETURN` (0, the lowest return any Episode but Wipe's can have; Wipe penalises arm contact and excess
force, so its failed Episodes count ``-max_episode_steps``); infra faults are left out. Success (upstream
``_check_success()``) is reported beside the score, not in it.

**Feedback** adds to the shared summary: outcomes ``succeeded`` (success at some step) / ``not_succeeded``; notes
``success`` (0/1: their mean is the success rate), ``success_at_end``, ``first_success_step`` (absent if never),
``success_steps``, ``saturated_fraction`` (share of steps with an arm delta at its bound; gripper commands are
left out), ``mean_abs_action``, ``eef_path`` (metres the end effector(s) travelled), for each 3-vector object field
named ``*_to_*`` (gripper-to-object offsets) ``final_<field>_distance`` and ``min_<field>_distance``, and where
upstream stages its dense reward (stack: reach, lift, stack; pick-place and nut assembly: reach, grasp, lift,
hover) ``max_<stage>_reward``; the same numbers per step in every trajectory (with ``<stage>_reward`` per step).
There is no visual evidence: rendering would need ``robosuite`` (and GL) in the Host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.robosuite_environment import (
    SATURATED,
    STAGES,
    RobosuiteEnvironment,
    _distance_fields,
    _layout,
    load_upstream,
    stages,
)
from evoledger.benchmarks.robosuite_tasks import (
    ACTION_BOUNDS,
    CONTROL_FREQUENCY,
    DEFAULT_STEPS,
    ROBOSUITE_VERSION,
    STEP_LIMIT,
    TASKS,
    RobosuiteTask,
)
from evoledger.benchmarks.table_benchmark import TableBenchmark
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, EpisodeSpec, Extra, OwnEnvironment
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "FAILURE_RETURN",
    "HEURISTICS",
    "SATURATED",
    "STAGES",
    "TASKS",
    "RobosuiteBenchmark",
    "RobosuiteConfig",
    "RobosuiteEnvironment",
    "RobosuiteTask",
    "build",
    "load_upstream",
    "stages",
]

EXTRA: Final = Extra(
    "robosuite",
    ("robosuite",),
    own_environment=OwnEnvironment(
        requirements=(f"robosuite=={ROBOSUITE_VERSION}", "mujoco>=3.3.0,<3.4", "pynput<1.7"),
        reason="robosuite 1.5.2 pins numpy < 2 (the main environment has numpy 2) and needs MuJoCo 3.3 (on MuJoCo 4 "
        "its environments fail to load)",
    ),
)
"""The family's extra: its own venv (``evoledger env install robosuite``). ``pynput<1.7`` (robosuite's keyboard
teleoperation, never used here) keeps the install to wheels: pynput 1.7+ needs ``evdev``, which PyPI has only as a
source distribution (built with a C compiler and the kernel headers)."""

FAILURE_RETURN: Final = 0.0
"""The return an Episode the Policy failed counts as (Wipe: ``-max_episode_steps``, see the module docstring)."""
HEURISTICS: Final = {
    **dict.fromkeys(("Lift", "Stack", "PickPlace", "PickPlaceSingle"), "robosuite-pick"),
    **dict.fromkeys(("PickPlaceMilk", "PickPlaceBread", "PickPlaceCereal", "PickPlaceCan"), "robosuite-pick"),
    **dict.fromkeys(("NutAssembly", "NutAssemblySingle", "NutAssemblySquare", "NutAssemblyRound"), "robosuite-nut"),
    "Door": "robosuite-door",
    "Wipe": "robosuite-wipe",
    "TwoArmLift": "robosuite-two-arm-lift",
    "TwoArmHandover": "robosuite-two-arm-handover",
    "TwoArmPegInHole": "robosuite-two-arm-peg-in-hole",
    "TwoArmTransport": "robosuite-two-arm-transport",
}
"""Environments with a heuristic Program (``<value>-heuristic``). tool-hang ships the zero-action baseline only:
upstream scores it with its sparse reward alone (1 per step of success), so a heuristic scores nothing until it
hangs the tool. two-arm-transport's is scored the same way: it lifts the lid, clears the trash and hands the hammer
over between the arms, and completes the task in 3 of 10 Episodes (``evoledger evaluate`` seeds 3 and 11, 5
Episodes each: 35.6 and 21.2 against 0 for the zero action); in the others the handover fails (robot1 does not
reach its grip point on the swinging hammer, or the hammer drops) or the hammer is not yet down at the end."""


class RobosuiteConfig(BaseModel):
    """Settings (``--set``) of every robosuite Benchmark."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int = Field(
        default=DEFAULT_STEPS,
        ge=1,
        le=STEP_LIMIT,
        description=f"Steps per Episode (robosuite's horizon; default {DEFAULT_STEPS}, at most {STEP_LIMIT}).",
    )


class RobosuiteBenchmark(TableBenchmark[spaces.Dict]):
    """One robosuite environment; built in the Host from the static table, stepped in the family's venv."""

    def __init__(self, facts: RobosuiteTask, *, max_episode_steps: int = DEFAULT_STEPS) -> None:
        """No ``robosuite`` here: the factories check the family's environment (``EXTRA.require``) first."""
        self._facts = facts
        failure_return = -float(max_episode_steps) if facts.env == "Wipe" else FAILURE_RETURN
        observation_space = spaces.Dict(
            {
                "proprioception": spaces.Box(-np.inf, np.inf, shape=(facts.proprioception_size,), dtype=np.float64),
                "objects": spaces.Box(-np.inf, np.inf, shape=(facts.objects_size,), dtype=np.float64),
            }
        )
        low, high = ACTION_BOUNDS
        action_space = spaces.Box(low, high, shape=(facts.actions,), dtype=np.float64)
        rule = (
            f"mean {'sparse' if facts.sparse else 'dense'} return; Episodes the Policy failed count as "
            f"{failure_return:g}; infra faults are left out; success is reported separately"
        )
        per_arm = "6 OSC_POSE deltas (dx, dy, dz, then axis-angle rotation)" + (
            " and 1 gripper command (-1 open, 1 close)" if facts.grippers else " (no gripper)"
        )
        arms = "one Panda arm" if facts.robots == 1 else "two Panda arms (opposed; robot0 then robot1)"
        description = (
            f"robosuite {ROBOSUITE_VERSION} {facts.env} with {arms} (runs in the family's own environment: "
            f"evoledger env install robosuite): {facts.summary}. Observation: a dict of float64 vectors, "
            f"proprioception [{facts.proprioception_size}] and objects [{facts.objects_size}] (field offsets in "
            f"context.metadata proprioception_fields / object_fields; objects: "
            f"{', '.join(name for name, _ in facts.objects)}). Action: {facts.actions} float64 in [{low:g}, {high:g}]: "
            f"per arm {per_arm}; out of range fails the Episode. {CONTROL_FREQUENCY} steps per simulated second; "
            f"Episodes are truncated after {max_episode_steps} steps. Reward: "
            f"{'sparse (1 per step of success)' if facts.sparse else 'dense, at most 1 per step'}. Score "
            f"(mean_return, maximize): {rule}. Settings (--set): max_episode_steps (1-{STEP_LIMIT})."
        )
        parameters: dict[str, Any] = {
            "env": facts.env,
            "robots": ["Panda"] * facts.robots,
            "controller": "BASIC (OSC_POSE arm, gripper)",
            "max_episode_steps": max_episode_steps,
            "control_freq": CONTROL_FREQUENCY,
        }
        metadata: dict[str, Any] = {
            "proprioception_fields": _layout(facts.proprioception),
            "object_fields": _layout(facts.objects),
            "grippers": facts.grippers,
            "sparse_reward": facts.sparse,
            "reward_stages": list(stages(facts)),
        }
        family = HEURISTICS.get(facts.env)
        super().__init__(
            name=facts.name,
            description=description,
            observation_space=observation_space,
            action_space=action_space,
            parameters=parameters,
            source="robosuite",
            extra=EXTRA,
            metadata=metadata,
            max_episode_steps=max_episode_steps,
            rule=rule,
            failure_return=failure_return,
            programs=shipped(family or "robosuite", baseline="robosuite-baseline", heuristic=family is not None),
        )

    @property
    def facts(self) -> RobosuiteTask:
        """The environment's fixed facts."""
        return self._facts

    def make_environment(self, episode: EpisodeSpec) -> RobosuiteEnvironment:
        """A fresh Environment for ``episode``; imports ``robosuite`` (the family's venv has it)."""
        return RobosuiteEnvironment(self, episode)

    def outcome(self, record: EpisodeRecord) -> str:
        """``succeeded`` when upstream's success check held at some step, else ``not_succeeded``."""
        return "succeeded" if float(record.final_metrics.get("success_steps", 0.0)) > 0 else "not_succeeded"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        """The notes the module docstring lists, from the Episode's last step metrics."""
        m = record.final_metrics
        notes: dict[str, float] = {}
        steps = max(record.steps, 1)
        if "success_steps" in m:
            notes["success"] = float(m["success_steps"] > 0)
            notes["success_steps"] = float(m["success_steps"])
        if "success" in m:
            notes["success_at_end"] = float(m["success"])
        if "first_success_step" in m:
            notes["first_success_step"] = float(m["first_success_step"])
        for total, note in (("saturated_steps", "saturated_fraction"), ("abs_action_sum", "mean_abs_action")):
            if total in m:
                notes[note] = float(m[total]) / steps
        if "eef_path" in m:
            notes["eef_path"] = float(m["eef_path"])
        for stage in stages(self._facts):
            if f"max_{stage}_reward" in m:
                notes[f"max_{stage}_reward"] = float(m[f"max_{stage}_reward"])
        for name, _ in _distance_fields(self._facts):
            for kind in ("final", "min"):
                key = f"{kind}_{name}_distance"
                if key in m:
                    notes[key] = float(m[key])
        return notes


def build(facts: RobosuiteTask, config: Mapping[str, Any]) -> RobosuiteBenchmark:
    """The Benchmark of ``facts`` with ``config`` (``--set``): checks the family's environment first."""
    EXTRA.require(facts.name)
    cfg = RobosuiteConfig.model_validate(dict(config))
    return RobosuiteBenchmark(facts, max_episode_steps=cfg.max_episode_steps)


def _factory(facts: RobosuiteTask) -> Callable[..., RobosuiteBenchmark]:
    def make(**config: Any) -> RobosuiteBenchmark:
        return build(facts, config)

    make.__name__ = make.__qualname__ = f"make_{facts.profile.replace('-', '_')}"
    make.__doc__ = f"``{facts.name}`` (robosuite {facts.env}); settings: max_episode_steps."
    make.config_model = RobosuiteConfig  # type: ignore[attr-defined]
    return make


BENCHMARKS: Final[dict[str, Callable[..., RobosuiteBenchmark]]] = {t.name: _factory(t) for t in TASKS}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=t.name, family="robosuite", summary=f"{t.env}: {t.summary}", extra=EXTRA) for t in TASKS
)
