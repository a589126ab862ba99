"""MiniGrid and BabyAI environments as evoledger Benchmarks: the parts the ``minigrid`` and ``babyai`` modules share.

The Policy sees, every step, a dict observation:

* ``image``: uint8 array of shape (7, 7, 3), the agent's egocentric view. Axes are (view_x, view_y, channel); the
  agent stands at (3, 6) and looks towards decreasing view_y. Channels: object type (0 unseen, 1 empty, 2 wall,
  3 floor, 4 door, 5 key, 6 ball, 7 box, 8 goal, 9 lava, 10 agent), colour (0 red, 1 green, 2 blue, 3 purple,
  4 yellow, 5 grey) and state (doors: 0 open, 1 closed, 2 locked). The cell at (3, 6) shows the carried object;
* ``direction``: int, 0 east, 1 south, 2 west, 3 north;
* ``mission``: str, the instruction (a gymnasium ``Text`` space; MiniGrid's own ``MissionSpace`` is not describable).

Actions are ints 0-6: left, right, forward, pickup, drop, toggle, done.

Score (``mean_return``, maximize): the mean upstream return, ``1 - 0.9 * steps / max_steps`` on success and 0
otherwise (DynamicObstacles: -1 on a collision); Episodes the Policy failed count as the worst return a running
Policy can get (0, or -1 where collisions exist); infra faults are left out. ``success_rate`` is reported beside it.
Playground has no goal; its return is the fraction of its nine rooms entered (see :class:`RoomCoverage`).

Feedback adds to the common summary: ``success_rate``, outcome classes (``success``, ``timeout``,
``failed_terminal``: lava, a wrong object, a collision, the wrong side of a Memory hallway), a milestone
``funnel`` (goal / key / box seen, key picked up, ball or box picked up, door opened, success), per-Episode notes
(distinct cells visited, stalls: steps that changed nothing the agent sees, milestones) and per-action usage.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import gymnasium as gym
import numpy as np
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, Extra, Feedback
from gymnasium import spaces

__all__ = [
    "ACTION_NAMES",
    "MINIGRID_EXTRA",
    "MISSION_CHARSET",
    "MISSION_MAX_LENGTH",
    "MinigridBenchmark",
    "MinigridTaskInfo",
    "PublicObservation",
    "RoomCoverage",
    "catalog_entry",
    "make_minigrid_benchmark",
]

MINIGRID_EXTRA: Final = Extra("minigrid", ("minigrid",))
"""``pip install 'evoledger[minigrid]'`` (WFC also needs ``networkx`` and ``imageio``, which minigrid[wfc] brings)."""

ACTION_NAMES: Final = ("left", "right", "forward", "pickup", "drop", "toggle", "done")
MISSION_MAX_LENGTH: Final = 512
MISSION_CHARSET: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.'-"
_KEY, _BALL, _BOX, _GOAL, _DOOR = 5, 6, 7, 8, 4
_FAILURE_NOTE: Final = "Episodes the Policy failed count as {worst}; infra faults are left out"


@dataclass(frozen=True, slots=True)
class MinigridTaskInfo:
    """One registered MiniGrid/BabyAI Benchmark: its name, upstream id, step limit and what it asks."""

    name: str
    gymnasium_id: str
    max_steps: int
    summary: str
    env_kwargs: Mapping[str, Any] | None = None
    failure_return: float = 0.0
    coverage: bool = False
    """Playground: score is room coverage (see :class:`RoomCoverage`)."""


class PublicObservation(gym.ObservationWrapper[dict[str, Any], Any, Any]):
    """MiniGrid's dict observation with the mission as a ``Text`` space and the direction as a plain int."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (7, 7, 3), np.uint8),
                "direction": spaces.Discrete(4),
                "mission": spaces.Text(MISSION_MAX_LENGTH, min_length=0, charset=MISSION_CHARSET),
            }
        )

    def reset(self, **kwargs: Any) -> Any:
        with contextlib.redirect_stdout(io.StringIO()):  # BabyAI prints every rejected level sample
            return super().reset(**kwargs)

    def observation(self, observation: Any) -> dict[str, Any]:
        return {
            "image": np.ascontiguousarray(observation["image"], dtype=np.uint8),
            "direction": int(observation["direction"]),
            "mission": str(observation["mission"]),
        }


class RoomCoverage(gym.Wrapper[Any, Any, Any, Any]):
    """Playground's score: reward 1/9 for each of its nine 3x3 rooms first entered (the start room on the first
    step), so the return is the fraction of rooms entered; the Episode terminates once all nine are entered."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._visited: set[tuple[int, int]] = set()
        self._start: tuple[int, int] | None = None

    def _room(self) -> tuple[int, int] | None:
        unwrapped: Any = self.env.unwrapped
        x, y = (int(v) for v in unwrapped.agent_pos)
        width = unwrapped.width // 3
        if x % width == 0 or y % width == 0:  # a wall line (a doorway): in no room
            return None
        return (x // width, y // width)

    def reset(self, **kwargs: Any) -> Any:
        result = self.env.reset(**kwargs)
        self._visited, self._start = set(), self._room()
        return result

    def step(self, action: Any) -> Any:
        observation, _reward, _terminated, truncated, info = self.env.step(action)
        before = len(self._visited)
        for room in (self._start, self._room()):
            if room is not None:
                self._visited.add(room)
        reward = (len(self._visited) - before) / 9.0
        return observation, reward, len(self._visited) == 9, truncated, info


_EVIDENCE: Final = VisualEvidence(episodes=2, frames=12, tile_width=128)
"""Contact sheets of two training Episodes per Feedback: minigrid's own full-grid rendering (numpy, no GL)."""


def _image(observation: Any) -> np.ndarray[Any, Any] | None:
    if not isinstance(observation, Mapping) or "image" not in observation:
        return None
    try:
        image = np.asarray(observation["image"], dtype=np.int64)
    except (TypeError, ValueError):
        return None
    return image if image.shape == (7, 7, 3) else None


def _milestones(record: EpisodeRecord) -> dict[str, float]:
    """Per-Episode notes from the trajectory: milestones seen, distinct cells, stalls."""
    trajectory = record.trajectory
    if trajectory is None or not trajectory.observations:
        return {}
    images = [_image(o) for o in trajectory.observations]
    seen = {_GOAL: False, _KEY: False, _BOX: False}
    key_picked = object_picked = door_opened = False
    stalls = 0
    for t, image in enumerate(images):
        if image is None:
            continue
        types = image[:, :, 0]
        for kind in seen:
            seen[kind] = seen[kind] or bool(np.any(types == kind))
        key_picked = key_picked or int(image[3, 6, 0]) == _KEY
        object_picked = object_picked or int(image[3, 6, 0]) in (_BALL, _BOX)
        if t == 0 or t > len(trajectory.actions):
            continue
        before, action = images[t - 1], trajectory.actions[t - 1]
        if before is None:
            continue
        front_before, front_after = before[3, 5], image[3, 5]
        if action == 5 and front_before[0] == _DOOR and front_before[2] > 0 and front_after[2] == 0:
            door_opened = True
        same_direction = trajectory.observations[t - 1].get("direction") == trajectory.observations[t].get("direction")
        if same_direction and np.array_equal(before, image):
            stalls += 1
    notes = {
        "goal_seen": float(seen[_GOAL]),
        "key_seen": float(seen[_KEY]),
        "box_seen": float(seen[_BOX]),
        "key_picked": float(key_picked),
        "object_picked": float(object_picked),
        "door_opened": float(door_opened),
        "stalls": float(stalls),
    }
    cells = {(m.get("x"), m.get("y")) for m in trajectory.metrics if "x" in m}
    if cells:
        notes["distinct_cells"] = float(len(cells))
    return notes


class MinigridBenchmark(GymBenchmark):
    """A MiniGrid or BabyAI Benchmark (see the module docstring)."""

    def __init__(self, task: GymTask, info: MinigridTaskInfo) -> None:
        self._info = info
        super().__init__(task)

    def _make_gym_env(self, **overrides: Any) -> Any:
        with warnings.catch_warnings():  # gymnasium warns that the v0 ids kept for comparability are out of date
            warnings.simplefilter("ignore", DeprecationWarning)
            env = super()._make_gym_env(**overrides)
        if self._info.coverage:
            env = RoomCoverage(env)
        return PublicObservation(env)

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """Also the agent's cell (``x``, ``y``), for the novelty notes."""
        x, y = step.env.agent_pos
        return {**super().simulation_metrics(step), "x": float(x), "y": float(y)}

    def outcome(self, record: EpisodeRecord) -> str:
        if self._info.coverage:
            return "all_rooms" if record.terminated else "timeout"
        if record.terminated:
            return "success" if record.episode_return > 0 else "failed_terminal"
        return "timeout"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        return _milestones(record)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        base = super().feedback(records)
        ok = [r for r in records if r.status == "ok"]
        funnel: Counter[str] = Counter()
        actions: Counter[int] = Counter()
        for record in ok:
            notes = _milestones(record)
            for key in ("goal_seen", "key_seen", "box_seen", "key_picked", "object_picked", "door_opened"):
                funnel[key] += int(notes.get(key, 0.0) > 0)
            funnel["success"] += int(self.outcome(record) in ("success", "all_rooms"))
            if record.trajectory is not None:
                actions.update(a for a in record.trajectory.actions if isinstance(a, int))
        total = sum(actions.values())
        content = dict(base.content)
        content["success_rate"] = round(funnel["success"] / len(records), 6) if records else None
        content["funnel"] = {"episodes": len(ok), **{k: funnel[k] for k in sorted(funnel)}}
        content["action_usage"] = {
            name: round(actions[i] / total, 4) if total else 0.0 for i, name in enumerate(ACTION_NAMES)
        }
        content["summary"] = f"{base.content['summary']}; success rate {content['success_rate']}"
        return Feedback(score=base.score, content=content, artifacts=base.artifacts)


def catalog_entry(info: MinigridTaskInfo, family: str) -> CatalogEntry:
    """The listing row of ``info``."""
    return CatalogEntry(
        name=info.name, family=family, summary=f"{info.gymnasium_id}: {info.summary}", extra=MINIGRID_EXTRA
    )


def make_minigrid_benchmark(
    info: MinigridTaskInfo, config: GymConfig, *, programs: Any, description_extra: str = ""
) -> MinigridBenchmark:
    """Build the Benchmark of ``info`` (the caller has already required the extra and imported minigrid)."""
    steps = config.max_episode_steps or info.max_steps
    worst = info.failure_return
    if info.coverage:
        rule = f"mean fraction of the nine rooms entered; {_FAILURE_NOTE.format(worst=worst)}"
        metric = "mean_room_coverage"
    else:
        rule = (
            "mean return (1 - 0.9 * steps / max_steps on success, else 0"
            + (", -1 on a collision" if worst < 0 else "")
            + f"); {_FAILURE_NOTE.format(worst=worst)}"
        )
        metric = "mean_return"
    description = (
        f"{info.summary} ({info.gymnasium_id}, minigrid). Observation: dict with 'image' uint8 (7, 7, 3) egocentric "
        "view (axes view_x, view_y, channel; channels object type, colour, state; agent at (3, 6) facing "
        "decreasing view_y; the cell (3, 6) shows the carried object), 'direction' int (0 east, 1 south, 2 west, "
        "3 north) and 'mission' str. Actions: 0 left, 1 right, 2 forward, 3 pickup, 4 drop, 5 toggle, 6 done. "
        f"Truncated after at most {steps} steps.{description_extra} Score ({metric}, maximize): {rule}."
    )
    return MinigridBenchmark(
        GymTask(
            benchmark_id=info.name,
            programs=programs,
            gymnasium_id=info.gymnasium_id,
            description=description,
            primary_metric=metric,
            score_rule=rule,
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs=dict(info.env_kwargs or {}),
            metadata={"action_names": list(ACTION_NAMES), "reports": ["success_rate", "funnel", "action_usage"]},
            visual_evidence=_EVIDENCE,
        ),
        info,
    )
