"""MiniGrid's standard environments and its 22 Wave Function Collapse presets as Benchmarks (``minigrid/...``).

Names: ``minigrid/<task>`` where ``<task>`` is the upstream id without ``MiniGrid-`` and ``-v0``, its CamelCase
words split by ``-`` and lowercased; size and count tokens stay one word (``DoorKey-8x8`` -> ``door-key-8x8``,
``KeyCorridorS3R1`` -> ``key-corridor-s3r1``, ``LavaCrossingS9N1`` -> ``lava-crossing-s9n1``, ``MemoryS13Random``
-> ``memory-s13-random``, ``ObstructedMaze-1Dlhb`` -> ``obstructed-maze-1dlhb``) and a version other than v0 is
kept as a suffix (``MultiRoom-N4-S5-v1`` -> ``multi-room-n4-s5-v1``). WFC presets are ``minigrid/wfc-<preset>``
(``MiniGrid-WFC-MazeSimple-v0`` -> ``minigrid/wfc-maze-simple``) with a ``size`` setting (15 or 25, default 25).

Every upstream ``MiniGrid-*`` id of minigrid 3.2.0 is registered (the 74 of the catalogue's 21 families, plus
MemoryS7 and MemoryS9). Step limits are the environments' own ``max_steps`` (the return formula uses them), except
Playground (1,000 steps) and WFC (4 * size^2). Observation, actions, score and Feedback: see
:mod:`evoledger.benchmarks.minigrid_adapter`. Playground is scored by room coverage, not return.

WFC needs ``networkx`` and ``imageio`` and the preset's pattern PNG, which minigrid's wheels and sdist (3.1.0 and
3.2.0) do not ship: building a WFC Benchmark whose pattern is missing raises a ConfigError naming the file and where
to get it. Slow presets can take minutes to generate one level.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymConfig
from evoledger.benchmarks.minigrid_adapter import (
    MINIGRID_EXTRA,
    MinigridBenchmark,
    MinigridTaskInfo,
    catalog_entry,
    make_minigrid_benchmark,
)
from evoledger.kernel.authoring import CatalogEntry, Extra
from evoledger.ledger.errors import ConfigError
from pydantic import Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "STANDARD_TASKS",
    "WFC_EXTRA",
    "WFC_PRESETS",
    "MissingPatternError",
    "WFCSettings",
    "task_name",
]

EXTRA: Final = MINIGRID_EXTRA
WFC_EXTRA: Final = Extra("minigrid", ("minigrid", "networkx", "imageio"))

_GOAL = "reach the green goal square"
_SUMMARIES: Final = {
    "BlockedUnlockPickup": "a ball blocks a locked door; move it, fetch the key, unlock, pick up the box",
    "DistShift": f"{_GOAL} past a strip of lava",
    "DoorKey": "pick up the key, unlock the door, reach the goal",
    "Dynamic": f"{_GOAL} dodging moving balls (a collision ends the Episode with -1)",
    "Empty": f"{_GOAL} in an empty room",
    "Fetch": "pick up the named object (picking any other ends the Episode)",
    "FourRooms": "reach the goal in four connected rooms",
    "GoToDoor": "stand next to the named door and say done",
    "GoToObject": "stand next to the named object and say done",
    "KeyCorridor": "find the key, unlock the room and pick up the ball",
    "LavaCrossing": f"{_GOAL} through gaps in rivers of lava",
    "LavaGap": f"{_GOAL} through the gap in a lava wall",
    "LockedRoom": "fetch the key from one room, unlock another and reach the goal",
    "Memory": "remember the object at the start and go to its match at the hallway's end",
    "MultiRoom": "open the doors of a chain of rooms and reach the goal",
    "ObstructedMaze": "pick up the blue ball behind locked doors, hidden keys and blocking balls",
    "Playground": "explore nine rooms (score: fraction of rooms entered)",
    "PutNear": "put the named object next to another (a wrong pickup ends the Episode)",
    "RedBlueDoors": "open the red door, then the blue one",
    "SimpleCrossing": f"{_GOAL} through gaps in walls",
    "Unlock": "open the locked door",
    "UnlockPickup": "unlock the door and pick up the box behind it",
}

STANDARD_TASKS: Final[tuple[tuple[str, int], ...]] = (
    ("BlockedUnlockPickup-v0", 576),
    ("DistShift1-v0", 252),
    ("DistShift2-v0", 252),
    *((f"DoorKey-{n}x{n}-v0", 10 * n * n) for n in (5, 6, 8, 16)),
    *((f"Dynamic-Obstacles-{n}x{n}-v0", 4 * n * n) for n in (5, 6, 8, 16)),
    *((f"Dynamic-Obstacles-Random-{n}x{n}-v0", 4 * n * n) for n in (5, 6)),
    *((f"Empty-{n}x{n}-v0", 4 * n * n) for n in (5, 6, 8, 16)),
    *((f"Empty-Random-{n}x{n}-v0", 4 * n * n) for n in (5, 6)),
    *((f"Fetch-{n}x{n}-N{k}-v0", 5 * n * n) for n, k in ((5, 2), (6, 2), (8, 3))),
    ("FourRooms-v0", 100),
    *((f"GoToDoor-{n}x{n}-v0", 4 * n * n) for n in (5, 6, 8)),
    *((f"GoToObject-{n}x{n}-N2-v0", 5 * n * n) for n in (6, 8)),
    *((f"KeyCorridorS{s}R{r}-v0", 30 * s * s) for s, r in ((3, 1), (3, 2), (3, 3), (4, 3), (5, 3), (6, 3))),
    *((f"LavaCrossingS{s}N{n}-v0", 4 * s * s) for s, n in ((9, 1), (9, 2), (9, 3), (11, 5))),
    *((f"LavaGapS{n}-v0", 4 * n * n) for n in (5, 6, 7)),
    ("LockedRoom-v0", 190),
    *((f"Memory{s}-v0", 5 * n * n) for s, n in (("S7", 7), ("S9", 9), ("S11", 11), ("S13", 13))),
    *((f"Memory{s}-v0", 5 * n * n) for s, n in (("S13Random", 13), ("S17Random", 17))),
    ("MultiRoom-N2-S4-v0", 40),
    ("MultiRoom-N4-S5-v0", 120),
    ("MultiRoom-N4-S5-v1", 80),
    ("MultiRoom-N6-v0", 120),
    *((f"ObstructedMaze-{p}", 288) for p in ("1Dl-v0", "1Dlh-v0", "1Dlhb-v0")),
    *((f"ObstructedMaze-{p}", 576) for p in ("2Dl-v0", "2Dlh-v0", "2Dlhb-v0", "2Dlhb-v1")),
    *((f"ObstructedMaze-{p}", 720) for p in ("1Q-v0", "1Q-v1")),
    *((f"ObstructedMaze-{p}", 1584) for p in ("2Q-v0", "2Q-v1")),
    *((f"ObstructedMaze-{p}", 3600) for p in ("Full-v0", "Full-v1")),
    ("Playground-v0", 1000),
    *((f"PutNear-{n}x{n}-N{k}-v0", 5 * n) for n, k in ((6, 2), (8, 3))),
    *((f"RedBlueDoors-{n}x{n}-v0", 20 * n * n) for n in (6, 8)),
    *((f"SimpleCrossingS{s}N{n}-v0", 4 * s * s) for s, n in ((9, 1), (9, 2), (9, 3), (11, 5))),
    ("Unlock-v0", 288),
    ("UnlockPickup-v0", 288),
)
"""Upstream id (without ``MiniGrid-``) and its step limit (the environment's own ``max_steps``)."""

WFC_PRESETS: Final[tuple[tuple[str, str, str], ...]] = (
    ("MazeSimple", "SimpleMaze.png", "default"),
    ("DungeonMazeScaled", "ScaledMaze.png", "default"),
    ("RoomsFabric", "Fabric.png", "default"),
    ("ObstaclesBlackdots", "Blackdots.png", "default"),
    ("ObstaclesAngular", "Angular.png", "default"),
    ("ObstaclesHogs3", "Hogs.png", "default"),
    ("ObstaclesHogs2", "Hogs.png", "inconsistent"),
    ("MazeKnot", "Knot.png", "inconsistent"),
    ("MazeWall", "SimpleWall.png", "inconsistent"),
    ("RoomsOffice", "Office.png", "inconsistent"),
    ("Skew2", "Skew2.png", "inconsistent"),
    ("Maze", "Maze.png", "slow"),
    ("MazeSpirals", "Spirals.png", "slow"),
    ("MazePaths", "Paths.png", "slow"),
    ("Mazelike", "Mazelike.png", "slow"),
    ("RoomsMagicOffice", "MagicOffice.png", "slow"),
    ("Dungeon", "DungeonExtr.png", "slow"),
    ("DungeonRooms", "Rooms.png", "slow"),
    ("DungeonLessRooms", "LessRooms.png", "slow"),
    ("DungeonSpirals", "SpiralsNeg.png", "slow"),
    ("SkewCave", "Cave.png", "slow"),
    ("SkewLake", "Lake.png", "slow"),
)
"""The 22 WFC presets: name, pattern file under ``minigrid/envs/wfc/patterns/`` and generation class."""

_NAME_OVERRIDES: Final = {"MemoryS13Random": "memory-s13-random", "MemoryS17Random": "memory-s17-random"}


def task_name(upstream: str) -> str:
    """The registry name of an upstream id without its ``MiniGrid-``/``BabyAI-`` prefix (see the module docstring).

    >>> task_name("DoorKey-8x8-v0"), task_name("KeyCorridorS3R1-v0"), task_name("ObstructedMaze-2Dlhb-v1")
    ('door-key-8x8', 'key-corridor-s3r1', 'obstructed-maze-2dlhb-v1')
    """
    stem = upstream.removesuffix("-v0")
    parts = []
    for part in stem.split("-"):
        override = _NAME_OVERRIDES.get(part)
        parts.append(override or re.sub(r"(?<=[a-z])(?=[A-Z])", "-", part).lower())
    return "-".join(parts)


def _standard_info(upstream: str, steps: int) -> MinigridTaskInfo:
    family = next(k for k in sorted(_SUMMARIES, key=len, reverse=True) if upstream.startswith(k))
    playground = family == "Playground"
    return MinigridTaskInfo(
        name=f"minigrid/{task_name(upstream)}",
        gymnasium_id=f"MiniGrid-{upstream}",
        max_steps=steps,
        summary=_SUMMARIES[family],
        env_kwargs={"max_steps": steps} if playground else None,
        failure_return=-1.0 if family == "Dynamic" else 0.0,
        coverage=playground,
    )


def _make_standard(info: MinigridTaskInfo, **config: Any) -> MinigridBenchmark:
    EXTRA.require(info.name)
    cfg = GymConfig.model_validate(config)
    import minigrid  # noqa: F401  (registers the MiniGrid-* ids with gymnasium)

    return make_minigrid_benchmark(info, cfg, programs=shipped("minigrid"))


class WFCSettings(GymConfig):
    """WFC configuration: the level's ``size`` as well as the step limit."""

    size: Literal[15, 25] = Field(default=25, description="Grid width and height (15 or 25); steps 4 * size^2.")


def _wfc_info(preset: str, generation: str, size: int) -> MinigridTaskInfo:
    steps = 4 * size * size
    return MinigridTaskInfo(
        name=f"minigrid/wfc-{task_name(preset)}",
        gymnasium_id=f"MiniGrid-WFC-{preset}-v0",
        max_steps=steps,
        summary=f"reach the goal in a level generated by Wave Function Collapse ({generation} preset)",
        env_kwargs={"size": size, "max_steps": steps},
    )


class MissingPatternError(ConfigError):
    """A WFC preset's pattern image is not installed (minigrid's wheels and sdists omit them); pip cannot fix it."""


def _make_wfc(preset: str, pattern: str, generation: str, **config: Any) -> MinigridBenchmark:
    name = f"minigrid/wfc-{task_name(preset)}"
    WFC_EXTRA.require(name)
    cfg = WFCSettings.model_validate(config)
    import gymnasium as gym
    import minigrid
    from minigrid.envs.wfc import config as wfc_config

    path = Path(wfc_config.PATTERN_PATH) / pattern
    if not path.is_file():
        raise MissingPatternError(
            f"{name} needs the WFC pattern image {path}, which minigrid's wheel and sdist do not ship; copy "
            "minigrid/envs/wfc/patterns/ from the Minigrid git repository (github.com/Farama-Foundation/Minigrid, "
            f"tag v{minigrid.__version__}) into {path.parent}"
        )
    info = _wfc_info(preset, generation, cfg.size)
    if info.gymnasium_id not in gym.registry:  # the inconsistent and slow presets are not registered upstream
        wfc_config.register_wfc_presets({preset: wfc_config.WFC_PRESETS_ALL[preset]}, gym.register)
    wait = "minutes" if generation == "slow" else "seconds"
    extra = f" The level is {cfg.size}x{cfg.size}; generating it can take {wait}."
    return make_minigrid_benchmark(info, cfg, programs=shipped("minigrid"), description_extra=extra)


_STANDARD: Final = tuple(_standard_info(upstream, steps) for upstream, steps in STANDARD_TASKS)
_WFC: Final = tuple((_wfc_info(preset, generation, 25), pattern) for preset, pattern, generation in WFC_PRESETS)

BENCHMARKS: Final[dict[str, Callable[..., MinigridBenchmark]]] = {
    **{info.name: functools.partial(_make_standard, info) for info in _STANDARD},
    **{
        info.name: functools.partial(_make_wfc, preset, pattern, generation)
        for (info, pattern), (preset, _, generation) in zip(_WFC, WFC_PRESETS, strict=True)
    },
}
CATALOG: Final[tuple[CatalogEntry, ...]] = (
    *(catalog_entry(info, "minigrid") for info in _STANDARD),
    *(catalog_entry(info, "minigrid") for info, _ in _WFC),
)
