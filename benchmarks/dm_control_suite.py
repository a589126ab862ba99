"""The DeepMind Control Suite as Benchmarks: ``dm-control/<domain>-<task>`` for the 28 ``suite.BENCHMARKING`` tasks.

**An environment of its own.** dm-control 1.0.50 needs MuJoCo 3 (with MuJoCo 4, which the ``mujoco`` family uses,
every ``suite.load`` fails: ``MjModel`` has no ``flex_vertedge``), so the family runs in a venv of its own:
``evoledger env install dm-control`` makes it and the family's workers start from its interpreter. The Host (CLI,
ledger, Agent, Feedback, scoring) never imports ``dm_control``: the spaces, the spec, the Episode plan and the
Feedback come from the static table in :mod:`evoledger.benchmarks.dm_control_tasks`; only
:meth:`DmControlBenchmark.make_environment` (called in a worker) imports ``dm_control``.

**Observations** are upstream's: a dict of named float64 arrays (a ``Dict`` of unbounded float64 ``Box`` es; the
fields per task are in each description). **Actions** are float64 vectors in [-1, 1], one per actuator, checked
strictly: a value outside the bounds (or NaN) fails the Episode with ``invalid_action``; nothing is clipped.
Episode ``i`` of a split loads the task with ``task_kwargs={"random": RandomState(seed mod 2**32)}`` where ``seed``
is the Episode's Host-owned seed; the task's own randomness (initial state, target) follows from it.

**Score** (``mean_return``, maximize): the mean Episode return (upstream reward, in [0, 1] per step, so returns lie
in [0, ``max_episode_steps``]); an Episode the Policy failed (exception, timeout, invalid action, ...) counts as
0, the lowest return there is, so failing never pays; infra faults are left out.

**Feedback** adds Benchmark words to the shared summary (``feedback_summary``):

* outcome classes from the mean reward of the last :data:`WINDOW` steps: ``solved`` (at least
  :data:`SOLVED_REWARD`), ``partly_solved`` (at least :data:`PARTLY_REWARD`) and ``unsolved``;
* per-Episode notes: ``final_window_reward``, ``rewarded_fraction`` (share of steps with reward >= 0.5),
  ``first_rewarded_step`` (when the Policy first earned 0.5 in a step; absent if never), ``mean_abs_action``,
  ``saturated_fraction`` (share of steps with an actuator at its bound) and each task physics metric's final value
  (``final_<metric>``: pole cosine, distances to the target, torso height, speed, ...);
* the same numbers per step in every trajectory (running totals where a total is meant), so ``trace.jsonl`` shows
  how an Episode developed.

**Heuristics** (:data:`HEURISTICS`): the walker's stand, walk and run share one Program that stands the walker when
it lands on its feet and otherwise flops it forward along the ground until it now and then bounces upright, so it
beats the zero action on all three without a gait (seed 3, 8 Episodes: 488 against 79 on stand, 131 against 14 on
walk, 90 against 13 on run). The hopper's stand balances the hopper in a crouch when it lands on its foot but cannot
get it up from the ground, so it wins on the few Episodes whose drop lands upright (seed 3, 16 Episodes: 84 against
4; seed 11: 68 against 1); hop ships the baseline only: the same crouch earns almost nothing there (1.7 against 0.3
over 40 seeds), and no forward hopping gait was found. The humanoid's three tasks were not attempted.

``fish-upright``'s heuristic tracks which way is up from ``upright`` and the body's turn rates and pitches and rolls
toward it with the fins (about 845 against 178 over 8 Episodes; the baseline's return is only how upright the fish
happened to start). ``finger-turn-easy`` and ``-hard`` share one that flicks the spinner round with unaimed fingertip
strokes until its tip reaches the target and then lets go; it solves 42-50% of easy and 21-33% of hard Episodes
against the 8-25% that start solved (over 500 steps: 214-221 against 62-125, and 105-164 against 42-83, on two seeds
of 24 Episodes). ``acrobot-swingup-sparse`` has none: the torque is far too weak to balance the acrobot (a linear hold
saturates a hundredth of a radian from upright), and neither the acrobot-swingup heuristic retuned for the sparse
reward nor an energy pump aimed at the upright's energy earned more than 1-4 per 1000-step Episode on average (the
baseline 0). ``manipulator-bring-ball`` has none either: grasping the ball and carrying it to within a few centimetres
of the target was not tried.

There is no visual evidence: rendering would need ``dm_control`` (and GL) in the Host.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.dm_control_tasks import ACTION_BOUNDS, METRICS, STEP_LIMIT, TASKS, DmControlTask
from evoledger.benchmarks.gym_spaces import check_action, plain_observation
from evoledger.benchmarks.table_benchmark import TableBenchmark
from evoledger.kernel.authoring import (
    CatalogEntry,
    EpisodeRecord,
    EpisodeSpec,
    Extra,
    Step,
)
from evoledger.kernel.authoring.catalog import OwnEnvironment
from evoledger.ledger.errors import InfraError
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "FAILURE_RETURN",
    "PARTLY_REWARD",
    "READINGS",
    "SOLVED_REWARD",
    "TASKS",
    "WINDOW",
    "DmControlBenchmark",
    "DmControlConfig",
    "DmControlEnvironment",
    "DmControlTask",
    "build",
    "load_upstream",
]

EXTRA: Final = Extra(
    "dm-control",
    ("dm_control",),
    own_environment=OwnEnvironment(
        requirements=("dm-control==1.0.50", "mujoco>=3.2,<4"),
        reason="dm-control 1.0.50 needs MuJoCo 3 (on MuJoCo 4 every task fails to load) and the mujoco family "
        "uses MuJoCo 4",
    ),
)
"""The family's extra: its own venv (``evoledger env install dm-control``)."""

FAILURE_RETURN: Final = 0.0
"""The return an Episode the Policy failed counts as: the lowest any Episode can have."""
WINDOW: Final = 100
"""Outcome classes look at the mean reward of this many last steps (all of a shorter Episode)."""
SOLVED_REWARD: Final = 0.8
"""Mean reward over the last :data:`WINDOW` steps counted as ``solved``."""
PARTLY_REWARD: Final = 0.2
"""Mean reward over the last :data:`WINDOW` steps counted as ``partly_solved``."""
REWARDED: Final = 0.5
"""A step earning at least this much counts as rewarded (``rewarded_fraction``, ``first_rewarded_step``)."""
SATURATED: Final = 0.999
"""An actuator at or beyond this fraction of its bound counts as saturated."""

HEURISTICS: Final = {
    "acrobot-swingup": "dm-control-acrobot",
    "ball-in-cup-catch": "dm-control-ball-in-cup",
    "cartpole-balance": "dm-control-cartpole",
    "cartpole-balance-sparse": "dm-control-cartpole",
    "cartpole-swingup": "dm-control-cartpole",
    "cartpole-swingup-sparse": "dm-control-cartpole",
    "cheetah-run": "dm-control-cheetah",
    "finger-spin": "dm-control-finger-spin",
    "finger-turn-easy": "dm-control-finger-turn",
    "finger-turn-hard": "dm-control-finger-turn",
    "fish-swim": "dm-control-fish-swim",
    "fish-upright": "dm-control-fish-upright",
    "hopper-stand": "dm-control-hopper",
    "pendulum-swingup": "dm-control-pendulum",
    "point-mass-easy": "dm-control-point-mass",
    "reacher-easy": "dm-control-reacher",
    "reacher-hard": "dm-control-reacher",
    "swimmer-swimmer6": "dm-control-swimmer",
    "swimmer-swimmer15": "dm-control-swimmer",
    "walker-run": "dm-control-walker",
    "walker-stand": "dm-control-walker",
    "walker-walk": "dm-control-walker",
}
"""Tasks (:attr:`DmControlTask.profile`) with a heuristic Program (``<value>-heuristic``; one Program may serve
several tasks of a domain); the others ship the zero-action baseline only."""


class DmControlConfig(BaseModel):
    """Settings (``--set``) of every DeepMind Control Suite Benchmark."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int | None = Field(
        default=None,
        ge=1,
        le=STEP_LIMIT,
        description=f"Truncate Episodes after this many steps (default and most: the suite's {STEP_LIMIT}).",
    )


def _observation_space(facts: DmControlTask) -> spaces.Dict:
    return spaces.Dict(
        {name: spaces.Box(-np.inf, np.inf, shape=shape, dtype=np.float64) for name, shape in facts.observation}
    )


def _fields(facts: DmControlTask) -> str:
    return ", ".join(f"{name} {list(shape)}" for name, shape in facts.observation)


class DmControlBenchmark(TableBenchmark[spaces.Dict]):
    """One DeepMind Control Suite task; built in the Host from the static table, stepped in the family's venv."""

    def __init__(self, facts: DmControlTask, *, max_episode_steps: int = STEP_LIMIT) -> None:
        """No ``dm_control`` here: the factories check the family's environment (``EXTRA.require``) first."""
        self._facts = facts
        observation_space = _observation_space(facts)
        low, high = ACTION_BOUNDS
        action_space = spaces.Box(low, high, shape=(facts.actions,), dtype=np.float64)
        rule = f"mean return; Episodes the Policy failed count as {FAILURE_RETURN:g}; infra faults are left out"
        metrics = "; ".join(f"{m}: {METRICS[m]}" for m in facts.metrics)
        description = (
            f"DeepMind Control Suite {facts.domain}/{facts.task} (dm_control suite, MuJoCo physics, runs in the "
            f"family's own environment: evoledger env install dm-control): {facts.summary}. Observation: a dict of "
            f"float64 arrays: {_fields(facts)}. Action: {facts.actions} float64 in [{low:g}, {high:g}] (one per "
            f"actuator; out of range fails the Episode). Reward in [0, 1] per step"
            f"{' (0 or 1: a success indicator)' if facts.sparse else ''}; {facts.control_timestep:g} s per step; "
            f"Episodes are truncated after {max_episode_steps} steps. Score (mean_return, maximize): mean Episode "
            f"return; Episodes the Policy failed count as {FAILURE_RETURN:g}; infra faults are left out. Step "
            f"metrics: {metrics}. Settings (--set): max_episode_steps (1-{STEP_LIMIT})."
        )
        parameters: dict[str, Any] = {
            "domain": facts.domain,
            "task": facts.task,
            "max_episode_steps": max_episode_steps,
            "control_timestep": facts.control_timestep,
        }
        family = HEURISTICS.get(facts.profile)
        super().__init__(
            name=facts.name,
            description=description,
            observation_space=observation_space,
            action_space=action_space,
            parameters=parameters,
            source="dm_control",
            extra=EXTRA,
            metadata={"step_metrics": {m: METRICS[m] for m in facts.metrics}},
            max_episode_steps=max_episode_steps,
            rule=rule,
            failure_return=FAILURE_RETURN,
            programs=shipped(family or "dm-control", baseline="dm-control-baseline", heuristic=family is not None),
        )

    @property
    def facts(self) -> DmControlTask:
        """The task's fixed facts."""
        return self._facts

    def make_environment(self, episode: EpisodeSpec) -> DmControlEnvironment:
        """A fresh Environment for ``episode``; imports ``dm_control`` (the family's venv has it)."""
        return DmControlEnvironment(self, episode)

    def outcome(self, record: EpisodeRecord) -> str:
        """``solved`` / ``partly_solved`` / ``unsolved`` by the mean reward of the last :data:`WINDOW` steps."""
        recent = float(record.final_metrics.get("recent_reward", 0.0))
        if recent >= SOLVED_REWARD:
            return "solved"
        return "partly_solved" if recent >= PARTLY_REWARD else "unsolved"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        """The notes the module docstring lists, from the Episode's last step metrics."""
        m = record.final_metrics
        notes: dict[str, float] = {}
        steps = max(record.steps, 1)
        if "recent_reward" in m:
            notes["final_window_reward"] = float(m["recent_reward"])
        for total, note in (
            ("rewarded_steps", "rewarded_fraction"),
            ("saturated_steps", "saturated_fraction"),
            ("abs_action_sum", "mean_abs_action"),
        ):
            if total in m:
                notes[note] = float(m[total]) / steps
        if "first_rewarded_step" in m:
            notes["first_rewarded_step"] = float(m["first_rewarded_step"])
        for metric in self._facts.metrics:
            if metric in m:
                notes[f"final_{metric}"] = float(m[metric])
        return notes


def _norm(value: Any) -> float:
    return float(np.linalg.norm(np.asarray(value, dtype=np.float64)))


READINGS: Final[dict[str, Callable[[Any], float]]] = {
    "acrobot.tip_to_target": lambda p: float(p.to_target()),
    "ball_in_cup.ball_in_cup": lambda p: float(p.in_target()),
    "ball_in_cup.ball_to_cup": lambda p: _norm(p.ball_to_target()),
    "cartpole.pole_cos": lambda p: float(np.asarray(p.pole_angle_cosine()).reshape(-1)[0]),
    "cartpole.cart_position": lambda p: float(p.cart_position()),
    "cheetah.speed": lambda p: float(p.speed()),
    "finger.hinge_velocity": lambda p: float(p.hinge_velocity()),
    "finger.dist_to_target": lambda p: float(p.dist_to_target()),
    "fish.upright": lambda p: float(p.upright()),
    "fish.mouth_to_target": lambda p: _norm(p.mouth_to_target()),
    "hopper.height": lambda p: float(p.height()),
    "hopper.speed": lambda p: float(p.speed()),
    "humanoid.head_height": lambda p: float(p.head_height()),
    "humanoid.speed": lambda p: float(np.asarray(p.center_of_mass_velocity())[0]),
    "humanoid.upright": lambda p: float(p.torso_upright()),
    "manipulator.ball_to_target": lambda p: float(p.site_distance("ball", "target_ball")),
    "pendulum.pole_cos": lambda p: float(p.pole_vertical()),
    "point_mass.mass_to_target": lambda p: float(p.mass_to_target_dist()),
    "reacher.finger_to_target": lambda p: float(p.finger_to_target_dist()),
    "swimmer.nose_to_target": lambda p: float(p.nose_to_target_dist()),
    "walker.height": lambda p: float(p.torso_height()),
    "walker.speed": lambda p: float(p.horizontal_velocity()),
    "walker.upright": lambda p: float(p.torso_upright()),
}
"""``<domain>.<metric>``: the physics reading behind each step metric (``dm_control_tasks.METRICS``)."""


def load_upstream(facts: DmControlTask, seed: int) -> Any:
    """The upstream environment of ``facts``, its task randomness seeded from ``seed`` (kept to 32 bits); imports
    ``dm_control``, so only a worker in the family's environment calls it."""
    os.environ.setdefault("MUJOCO_GL", "disable")  # no rendering here; without it dm_control probes GLFW (X11)
    from dm_control import suite

    return suite.load(facts.domain, facts.task, task_kwargs={"random": np.random.RandomState(seed % 2**32)})


class DmControlEnvironment:
    """One Episode of a :class:`DmControlBenchmark`: a fresh ``dm_control`` environment, in the family's venv."""

    def __init__(self, benchmark: DmControlBenchmark, episode: EpisodeSpec) -> None:
        self._benchmark = benchmark
        self._facts = benchmark.facts
        self._seed = episode.seed
        self._env: Any = load_upstream(self._facts, self._seed)
        self._readings = [(m, READINGS[f"{self._facts.domain}.{m}"]) for m in self._facts.metrics]
        self._started = self._ended = self._closed = False
        self._steps = 0
        self._window: deque[float] = deque(maxlen=WINDOW)
        self._totals: dict[str, float] = {}
        self._first_rewarded: int | None = None

    def reset(self) -> Any:
        """Start the Episode from its seed and return the first observation (a second reset starts it over: the
        task is loaded again, so the same seed gives the same Episode)."""
        if self._closed:
            raise InfraError("reset() on a closed dm_control Environment; make a fresh one per Episode")
        if self._started:
            self._env.close()
            self._env = load_upstream(self._facts, self._seed)
        timestep = self._env.reset()
        self._started, self._ended, self._steps, self._first_rewarded = True, False, 0, None
        self._window.clear()
        self._totals = {"rewarded_steps": 0.0, "saturated_steps": 0.0, "abs_action_sum": 0.0}
        return plain_observation(self._benchmark.observation_space, timestep.observation)

    def step(self, action: Any) -> Step:
        """Apply ``action`` (checked strictly against the action space) and return the Step."""
        if not self._started or self._ended or self._closed:
            state = "closed" if self._closed else ("ended" if self._ended else "not reset")
            raise InfraError(f"step() called on a dm_control Environment that is {state}; call reset() first")
        checked = check_action(self._benchmark.action_space, action)
        timestep = self._env.step(checked)
        self._steps += 1
        reward = float(timestep.reward or 0.0)
        terminated = bool(timestep.last()) and float(timestep.discount) == 0.0
        truncated = not terminated and (bool(timestep.last()) or self._steps >= self._benchmark.max_episode_steps)
        self._ended = terminated or truncated
        observation = plain_observation(self._benchmark.observation_space, timestep.observation)
        return Step(observation, reward, terminated, truncated, self._metrics(reward, checked))

    def _metrics(self, reward: float, action: np.ndarray[Any, Any]) -> dict[str, float]:
        physics = self._env.physics
        metrics = {name: reading(physics) for name, reading in self._readings}
        self._window.append(reward)
        totals = self._totals
        totals["rewarded_steps"] += reward >= REWARDED
        magnitude = np.abs(action)
        totals["saturated_steps"] += bool(np.any(magnitude >= SATURATED))
        totals["abs_action_sum"] += float(magnitude.mean()) if magnitude.size else 0.0
        if self._first_rewarded is None and reward >= REWARDED:
            self._first_rewarded = self._steps
        metrics["recent_reward"] = math.fsum(self._window) / len(self._window)
        metrics.update(totals)
        if self._first_rewarded is not None:
            metrics["first_rewarded_step"] = float(self._first_rewarded)
        return metrics

    def close(self) -> None:
        """Close the upstream environment; safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._env.close()


def build(facts: DmControlTask, config: Mapping[str, Any]) -> DmControlBenchmark:
    """The Benchmark of ``facts`` with ``config`` (``--set``): checks the family's environment first."""
    EXTRA.require(facts.name)
    cfg = DmControlConfig.model_validate(dict(config))
    return DmControlBenchmark(facts, max_episode_steps=cfg.max_episode_steps or STEP_LIMIT)


def _factory(facts: DmControlTask) -> Callable[..., DmControlBenchmark]:
    def make(**config: Any) -> DmControlBenchmark:
        return build(facts, config)

    make.__name__ = make.__qualname__ = f"make_{facts.profile.replace('-', '_')}"
    make.__doc__ = f"``{facts.name}`` (dm_control {facts.domain}/{facts.task}); settings: max_episode_steps."
    make.config_model = DmControlConfig  # type: ignore[attr-defined]
    return make


BENCHMARKS: Final[dict[str, Callable[..., DmControlBenchmark]]] = {t.name: _factory(t) for t in TASKS}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=t.name, family="dm-control", summary=f"{t.domain}/{t.task}: {t.summary}", extra=EXTRA)
    for t in TASKS
)
