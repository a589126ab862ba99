"""MetaWorld as Benchmarks: ``metaworld/<task>`` for the 50 MT1 tasks, ``metaworld/mt10`` and ``metaworld/mt50``.

**An environment of its own.** metaworld 3.1.1 pins ``mujoco==3.3.0`` and the main environment has MuJoCo 4 (the
``mujoco`` family), so the family runs in a venv of its own: ``evoledger env install metaworld`` makes it and the
family's workers start from its interpreter. The Host (CLI, ledger, Agent, Feedback, scoring) never imports
``metaworld``: spaces, spec, Episode plan and Feedback come from the static table in
:mod:`evoledger.benchmarks.metaworld_tasks`; only :meth:`MetaWorldBenchmark.make_environment` (in a worker) imports it.

**An Episode** is upstream's MT1 environment of one task: ``gymnasium.make("Meta-World/MT1", env_name=<task>-v3,
seed=s, num_goals=1, reward_function_version="v2", terminate_on_success=False)`` reset with ``seed=s``, where ``s``
is the Episode's Host-owned seed kept to 32 bits (it fixes the object and goal positions). Episodes run 500 steps
(upstream's limit; ``max_episode_steps`` shortens them). In ``mt10`` / ``mt50`` Episode ``i`` of a split plays task
``(offset + i) mod n`` of the collection (upstream's order; ``n`` = 10 or 50), ``offset`` derived from the split's
Host seed: consecutive pool indices go round the tasks from a hidden start, and ``n`` consecutive indices play each
task once.

**Observations** are upstream's 39 float64 numbers (layout in the description: hand, gripper, two objects, the same
one step earlier, goal); the static space bounds the hand by upstream's hand space and the gripper by [-1, 1] and
leaves the rest unbounded (upstream's own declared space bounds the goal by 0, which its MT1 observations break).
In ``mt10`` / ``mt50`` the observation is a dict: ``state`` (the 39 numbers) and ``task`` (an int8 one-hot of length
``n`` naming the Episode's task; the names, in one-hot order, are the ``tasks`` environment parameter). **Actions**
are 4 float64 in [-1, 1] (end-effector dx, dy, dz; gripper effort), checked strictly: out of range or NaN fails the
Episode with ``invalid_action``; nothing is clipped.

**Score** (``mean_return``, maximize) is the **success rate**: an Episode's return is 1 when upstream's
``info["success"]`` held at any step (the reward is 1 on the first such step and 0 on every other), else 0.
Episodes the Policy failed count 0; infra faults are left out. Upstream's dense v2 reward (0-10 per step) is the step
metric ``upstream_reward`` and its running total ``upstream_return``.

**Feedback** adds to the shared summary (``feedback_summary``): outcomes ``succeeded`` (success at the last step),
``lost_success`` (success reached, then lost by the end: counted as a success, shown as a regression) and
``never_succeeded`` (in the collections prefixed by the task, ``reach: succeeded``, so the outcome counts are the
per-task statistics); per-Episode notes ``succeeded``, ``first_success_step``, ``success_steps``,
``first_grasp_step`` (upstream's ``grasp_success``), ``upstream_return``, the final reward components
``final_near_object``, ``final_grasp_reward``, ``final_in_place_reward``, the final and closest object-to-goal
distance (``final_obj_to_target``, ``min_obj_to_target``) and, in the collections, ``task_index``. There is no visual
evidence: rendering would need ``metaworld`` (and GL) in the Host.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_spaces import check_action, plain_observation
from evoledger.benchmarks.metaworld_tasks import (
    ACTION_BOUNDS,
    COLLECTIONS,
    HAND_HIGH,
    HAND_LOW,
    OBSERVATION_LAYOUT,
    OBSERVATION_SIZE,
    STEP_LIMIT,
    TASKS,
    MetaWorldTask,
)
from evoledger.benchmarks.table_benchmark import TableBenchmark
from evoledger.kernel.authoring import (
    CatalogEntry,
    EpisodeRecord,
    EpisodeSpec,
    Extra,
    Split,
    Step,
    check_episode_request,
    derive_seed,
)
from evoledger.kernel.authoring.catalog import OwnEnvironment
from evoledger.ledger.errors import InfraError
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "COMPONENTS",
    "EXTRA",
    "FAILURE_RETURN",
    "MetaWorldBenchmark",
    "MetaWorldConfig",
    "MetaWorldEnvironment",
    "build",
    "load_upstream",
    "observation_space",
]

EXTRA: Final = Extra(
    "metaworld",
    ("metaworld",),
    own_environment=OwnEnvironment(
        requirements=("metaworld==3.1.1", "mujoco==3.3.0", "packaging>=23"),
        reason="metaworld 3.1.1 pins mujoco 3.3.0 and the mujoco family uses MuJoCo 4 (beside the other families "
        "the resolver falls back to metaworld 3.0.0)",
    ),
)
"""The family's extra: its own venv (``evoledger env install metaworld``). ``packaging``: gymnasium's MuJoCo module
imports it and metaworld does not declare it."""

FAILURE_RETURN: Final = 0.0
"""The return an Episode the Policy failed counts as: that of an unsuccessful Episode."""
COMPONENTS: Final = ("near_object", "grasp_reward", "in_place_reward", "obj_to_target")
"""Upstream's v2 reward components (``info``) recorded per step and reported at the end of each Episode."""
_TASK_BY_NAME: Final = {t.task: t for t in TASKS}


class MetaWorldConfig(BaseModel):
    """Settings (``--set``) of every MetaWorld Benchmark."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int | None = Field(
        default=None,
        ge=1,
        le=STEP_LIMIT,
        description=f"Truncate Episodes after this many steps (default and most: upstream's {STEP_LIMIT}).",
    )


def observation_space() -> spaces.Box:
    """The 39 float64 numbers: the hand in upstream's hand space, the gripper in [-1, 1], the rest unbounded."""
    low = np.full(OBSERVATION_SIZE, -np.inf)
    high = np.full(OBSERVATION_SIZE, np.inf)
    for start in (0, 18):
        low[start : start + 3], high[start : start + 3] = HAND_LOW, HAND_HIGH
        low[start + 3], high[start + 3] = -1.0, 1.0
    return spaces.Box(low, high, dtype=np.float64)


class MetaWorldBenchmark(TableBenchmark[spaces.Space[Any]]):
    """One MT1 task or a collection (MT10, MT50); built in the Host from the static table, stepped in the venv."""

    def __init__(self, profile: str, *, max_episode_steps: int = STEP_LIMIT) -> None:
        """``profile``: a task (``pick-place``) or a collection (``mt10``, ``mt50``). No ``metaworld`` here: the
        factories check the family's environment (``EXTRA.require``) first."""
        self._collection = COLLECTIONS.get(profile)
        tasks = self._collection or (profile,)
        self._tasks = tuple(_TASK_BY_NAME[t] for t in tasks)
        name = f"metaworld/{profile}"
        state = observation_space()
        space: spaces.Space[Any] = (
            state if self._collection is None else spaces.Dict({"state": state, "task": spaces.MultiBinary(len(tasks))})
        )
        low, high = ACTION_BOUNDS
        action_space = spaces.Box(low, high, shape=(4,), dtype=np.float64)
        rule = (
            "success rate: an Episode's return is 1 when upstream's info['success'] held at any step (reward 1 on "
            f"the first such step, else 0); Episodes the Policy failed count as {FAILURE_RETURN:g}; infra faults "
            "are left out"
        )
        if self._collection is None:
            what = f"MetaWorld MT1 {profile} ({self._tasks[0].upstream}): {self._tasks[0].summary}"
            shown = f"Observation: 39 float64 ({OBSERVATION_LAYOUT})"
        else:
            what = (
                f"MetaWorld {profile.upper()}: each Episode one of {len(tasks)} tasks ({', '.join(tasks)}); Episode "
                f"i of a split plays task (offset + i) mod {len(tasks)}, the offset hidden"
            )
            shown = (
                f"Observation: a dict: state, 39 float64 ({OBSERVATION_LAYOUT}); task, int8 one-hot of "
                f"{len(tasks)} naming the Episode's task (order: the tasks environment parameter)"
            )
        description = (
            f"{what} (Sawyer arm, MuJoCo physics, runs in the family's own environment: evoledger env install "
            f"metaworld). {shown}. Action: 4 float64 in [{low:g}, {high:g}]: end-effector dx, dy, dz and gripper "
            f"effort (-1 open, 1 close); out of range fails the Episode. Object and goal positions vary with the "
            f"Episode. Episodes are truncated after {max_episode_steps} steps. Score (mean_return, maximize): "
            f"{rule}. Step metrics: success, upstream_reward (v2 dense reward, 0-10), upstream_return, "
            f"near_object, grasp_success, grasp_reward, in_place_reward, obj_to_target. Settings (--set): "
            f"max_episode_steps (1-{STEP_LIMIT})."
        )
        parameters: dict[str, Any] = {"max_episode_steps": max_episode_steps}
        if self._collection is None:
            parameters["task"] = profile
        else:
            parameters["collection"] = profile
            parameters["tasks"] = list(tasks)
        super().__init__(
            name=name,
            description=description,
            observation_space=space,
            action_space=action_space,
            parameters=parameters,
            source="metaworld",
            extra=EXTRA,
            metadata={"observation_layout": OBSERVATION_LAYOUT},
            max_episode_steps=max_episode_steps,
            rule=rule,
            failure_return=FAILURE_RETURN,
            programs=shipped("metaworld"),
        )

    @property
    def tasks(self) -> tuple[MetaWorldTask, ...]:
        """The task (MT1) or the collection's tasks in one-hot order."""
        return self._tasks

    @property
    def collection(self) -> bool:
        """Whether this is MT10 or MT50 (dict observations with the task one-hot)."""
        return self._collection is not None

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        """``count`` Episodes of ``split``: Episode ``i`` seeded with ``derive_seed(seed, "episode", split, i)``,
        playing task ``(offset + i) mod n`` (``offset = derive_seed(seed, "task-offset", split) mod n``); its
        scenario holds the task's index (a number: the Feedback names tasks, and a scenario's strings must not
        appear there) and upstream's seed (the Episode seed's low 32 bits)."""
        check_episode_request(split, seed=seed, count=count)
        n = len(self._tasks)
        offset = derive_seed(seed, "task-offset", split) % n
        plan = []
        for i in range(count):
            episode_seed = derive_seed(seed, "episode", split, i)
            scenario = {"task_index": (offset + i) % n, "upstream_seed": episode_seed & 0xFFFFFFFF}
            plan.append(EpisodeSpec(split=split, index=i, seed=episode_seed, scenario=scenario))
        return plan

    def task_of(self, episode: EpisodeSpec) -> int:
        """The index (in :attr:`tasks`) of the task ``episode`` plays."""
        index = (episode.scenario or {}).get("task_index", 0)
        if not isinstance(index, int) or not 0 <= index < len(self._tasks):
            raise InfraError(f"Episode {episode.index} names task index {index!r}, not one of {self._name}'s")
        return index

    def make_environment(self, episode: EpisodeSpec) -> MetaWorldEnvironment:
        """A fresh Environment for ``episode``; imports ``metaworld`` (the family's venv has it)."""
        return MetaWorldEnvironment(self, episode)

    def outcome(self, record: EpisodeRecord) -> str:
        """``succeeded`` / ``lost_success`` / ``never_succeeded``, prefixed by the task in the collections."""
        m = record.final_metrics
        if m.get("success", 0.0) >= 0.5:
            label = "succeeded"
        else:
            label = "lost_success" if m.get("success_steps", 0.0) > 0 else "never_succeeded"
        if self._collection is None:
            return label
        index = int(m.get("task_index", -1))
        task = self._tasks[index].task if 0 <= index < len(self._tasks) else "unknown"
        return f"{task}: {label}"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        """The notes the module docstring lists, from the Episode's last step metrics."""
        m = record.final_metrics
        notes = {"succeeded": 1.0 if m.get("success_steps", 0.0) > 0 else 0.0}
        keys = {
            "first_success_step": "first_success_step",
            "success_steps": "success_steps",
            "first_grasp_step": "first_grasp_step",
            "upstream_return": "upstream_return",
            **{f"final_{c}": c for c in COMPONENTS},
            "min_obj_to_target": "min_obj_to_target",
            "task_index": "task_index",
        }
        for note, metric in keys.items():
            if metric in m:
                notes[note] = float(m[metric])
        return notes


def load_upstream(task: MetaWorldTask, seed: int) -> Any:
    """Upstream's MT1 environment of ``task`` with one goal, seeded from ``seed`` (kept to 32 bits); imports
    ``metaworld``, so only a worker in the family's environment calls it."""
    os.environ.setdefault("MUJOCO_GL", "disable")  # no rendering here
    import gymnasium
    import metaworld  # noqa: F401  (registers Meta-World/MT1)

    return gymnasium.make(
        "Meta-World/MT1",
        env_name=task.upstream,
        seed=seed & 0xFFFFFFFF,
        num_goals=1,
        reward_function_version="v2",
        terminate_on_success=False,
        disable_env_checker=True,
    )


class MetaWorldEnvironment:
    """One Episode of a :class:`MetaWorldBenchmark`: a fresh upstream environment, in the family's venv."""

    def __init__(self, benchmark: MetaWorldBenchmark, episode: EpisodeSpec) -> None:
        self._benchmark = benchmark
        self._task_index = benchmark.task_of(episode)
        self._task = benchmark.tasks[self._task_index]
        self._seed = int((episode.scenario or {}).get("upstream_seed", episode.seed & 0xFFFFFFFF))
        self._env: Any = load_upstream(self._task, self._seed)
        self._one_hot = np.zeros(len(benchmark.tasks), dtype=np.int8)
        self._one_hot[self._task_index] = 1
        self._started = self._ended = self._closed = False
        self._totals: dict[str, float] = {}

    def _observation(self, state: Any) -> Any:
        space = self._benchmark.observation_space
        if self._benchmark.collection:
            return plain_observation(space, {"state": state, "task": self._one_hot})
        return plain_observation(space, state)

    def reset(self) -> Any:
        """Start the Episode from its seed and return the first observation (a second reset starts it over: the
        environment is made again, so the same seed gives the same Episode)."""
        if self._closed:
            raise InfraError("reset() on a closed MetaWorld Environment; make a fresh one per Episode")
        if self._started:
            self._env.close()
            self._env = load_upstream(self._task, self._seed)
        state, _ = self._env.reset(seed=self._seed)
        self._started, self._ended = True, False
        self._totals = {
            "steps": 0.0,
            "success_steps": 0.0,
            "upstream_return": 0.0,
            "first_success_step": -1.0,
            "first_grasp_step": -1.0,
            "min_obj_to_target": math.inf,
        }
        return self._observation(state)

    def step(self, action: Any) -> Step:
        """Apply ``action`` (checked strictly against the action space) and return the Step."""
        if not self._started or self._ended or self._closed:
            state = "closed" if self._closed else ("ended" if self._ended else "not reset")
            raise InfraError(f"step() called on a MetaWorld Environment that is {state}; call reset() first")
        checked = check_action(self._benchmark.action_space, action)
        state, upstream, _, upstream_truncated, info = self._env.step(checked)
        t = self._totals
        t["steps"] += 1
        success = float(info.get("success", 0.0)) >= 0.5
        reward = 1.0 if success and t["success_steps"] == 0 else 0.0
        if success:
            t["success_steps"] += 1
            if t["first_success_step"] < 0:
                t["first_success_step"] = t["steps"]
        if float(info.get("grasp_success", 0.0)) >= 0.5 and t["first_grasp_step"] < 0:
            t["first_grasp_step"] = t["steps"]
        t["upstream_return"] += float(upstream)
        distance = float(info.get("obj_to_target", math.inf))
        t["min_obj_to_target"] = min(t["min_obj_to_target"], distance)
        truncated = bool(upstream_truncated) or t["steps"] >= self._benchmark.max_episode_steps
        self._ended = truncated
        metrics = {
            "success": 1.0 if success else 0.0,
            "upstream_reward": float(upstream),
            "grasp_success": float(info.get("grasp_success", 0.0)),
            **{c: float(info.get(c, 0.0)) for c in COMPONENTS},
            **{
                k: v
                for k, v in t.items()
                if k != "steps" and math.isfinite(v) and not (k.startswith("first_") and v < 0)
            },
        }
        if self._benchmark.collection:
            metrics["task_index"] = float(self._task_index)
        return Step(self._observation(state), reward, False, truncated, metrics)

    def close(self) -> None:
        """Close the upstream environment; safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._env.close()


def build(profile: str, config: Mapping[str, Any]) -> MetaWorldBenchmark:
    """The Benchmark of ``profile`` with ``config`` (``--set``): checks the family's environment first."""
    EXTRA.require(f"metaworld/{profile}")
    cfg = MetaWorldConfig.model_validate(dict(config))
    return MetaWorldBenchmark(profile, max_episode_steps=cfg.max_episode_steps or STEP_LIMIT)


def _factory(profile: str, summary: str) -> Callable[..., MetaWorldBenchmark]:
    def make(**config: Any) -> MetaWorldBenchmark:
        return build(profile, config)

    make.__name__ = make.__qualname__ = f"make_{profile.replace('-', '_')}"
    make.__doc__ = f"``metaworld/{profile}`` ({summary}); settings: max_episode_steps."
    make.config_model = MetaWorldConfig  # type: ignore[attr-defined]
    return make


_PROFILES: Final[tuple[tuple[str, str], ...]] = (
    *((t.task, f"{t.upstream}: {t.summary}") for t in TASKS),
    ("mt10", "MT10: one of upstream's 10 MT10 tasks per Episode, named by a one-hot in the observation"),
    ("mt50", "MT50: one of the 50 tasks per Episode, named by a one-hot in the observation"),
)
BENCHMARKS: Final[dict[str, Callable[..., MetaWorldBenchmark]]] = {
    f"metaworld/{profile}": _factory(profile, summary) for profile, summary in _PROFILES
}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=f"metaworld/{profile}", family="metaworld", summary=summary, extra=EXTRA)
    for profile, summary in _PROFILES
)
