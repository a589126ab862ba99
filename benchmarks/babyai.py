"""The 40 BabyAI tasks of minigrid as Benchmarks (``babyai/...``): language missions in MiniGrid worlds.

Names: ``babyai/<task>`` with ``<task>`` the upstream id without ``BabyAI-`` and ``-v0``, CamelCase split by ``-``
and lowercased, size tokens kept whole (``BabyAI-GoToRedBall-v0`` -> ``babyai/go-to-red-ball``,
``BabyAI-PutNextS7N4-v0`` -> ``babyai/put-next-s7n4``), as :func:`evoledger.benchmarks.minigrid.task_name` does.

The mission is natural language from BabyAI's grammar ("go to the red ball", "open the door on your left",
"put the grey key next to a box, then pick up the blue ball", ...); locations ("on your left") are relative to
where the agent starts. BabyAI truncates an Episode after its own ``max_steps``, which grows with the number of
sub-goals of the mission; the Benchmark's step limit is the largest it can be (8 navigations for the Synth, Seq and
Boss levels), so BabyAI's limit is the one that applies and the return formula uses it. Observation, actions, score
and Feedback: see :mod:`evoledger.benchmarks.minigrid_adapter`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymConfig
from evoledger.benchmarks.minigrid import task_name
from evoledger.benchmarks.minigrid_adapter import (
    MINIGRID_EXTRA,
    MinigridBenchmark,
    MinigridTaskInfo,
    catalog_entry,
    make_minigrid_benchmark,
)
from evoledger.kernel.authoring import CatalogEntry

__all__ = ["BABYAI_TASKS", "BENCHMARKS", "CATALOG", "EXTRA"]

EXTRA: Final = MINIGRID_EXTRA

BABYAI_TASKS: Final[tuple[tuple[str, int, str], ...]] = (
    # GoTo
    ("GoToRedBallGrey", 64, "go to the red ball; grey boxes and keys distract"),
    ("GoToRedBall", 64, "go to the red ball among distractors in one room"),
    ("GoToRedBallNoDists", 64, "go to the red ball, alone in one room"),
    ("GoToObj", 64, "go to the named object, alone in one room"),
    ("GoToLocal", 64, "go to the named object among distractors in one room"),
    ("GoTo", 576, "go to the named object anywhere in a 3x3 maze of rooms"),
    ("GoToImpUnlock", 576, "go to an object behind a locked door (find its key first)"),
    ("GoToSeq", 2304, "a sequence of go-to instructions in a 3x3 maze"),
    ("GoToRedBlueBall", 64, "go to the red or blue ball named"),
    ("GoToDoor", 441, "go to the named door of one room"),
    ("GoToObjDoor", 576, "go to the named object or door"),
    # Open
    ("Open", 576, "open the named door in a 3x3 maze"),
    ("OpenRedDoor", 50, "open the red door of the room"),
    ("OpenDoor", 576, "open the door named by colour or location"),
    ("OpenTwoDoors", 720, "open two named doors, in order"),
    ("OpenDoorsOrderN4", 720, "open named doors in the order given among four"),
    # Pickup and PutNext
    ("Pickup", 576, "pick up the named object anywhere in a 3x3 maze"),
    ("UnblockPickup", 576, "pick up the named object; blockers may stand in doorways"),
    ("PickupLoc", 64, "pick up the object named by type, colour or location"),
    ("PickupDist", 49, "pick up the named object among distractors"),
    ("PickupAbove", 288, "pick up the object in the room above"),
    ("PutNextLocal", 128, "put one named object next to another in one room"),
    ("PutNextS7N4", 392, "put one named object next to another across two rooms"),
    # Unlock
    ("Unlock", 576, "open a locked door (find its key)"),
    ("UnlockLocal", 576, "open the locked door of the room"),
    ("KeyInBox", 576, "open a locked door whose key is hidden in a box"),
    ("UnlockPickup", 72, "unlock a door and pick up the box behind it"),
    ("BlockedUnlockPickup", 576, "move a blocker, unlock a door and pick up the box behind it"),
    ("UnlockToUnlock", 1080, "unlock one door to reach the key of another"),
    # Composite
    ("ActionObjDoor", 441, "go to, pick up or open the named object or door"),
    ("FindObjS7", 980, "find and pick up an object in one of several rooms"),
    ("KeyCorridor", 1080, "find the key, unlock the room and pick up the ball"),
    ("OneRoomS8", 64, "pick up the single ball of one room"),
    ("MoveTwoAcrossS8N9", 1024, "put objects of two rooms next to each other"),
    ("Synth", 1152, "one instruction of any kind (go to, open, pick up, put next to)"),
    ("SynthLoc", 1152, "one instruction of any kind, with locations"),
    ("SynthSeq", 4608, "a sequence of instructions of any kind"),
    ("MiniBossLevel", 800, "the full grammar in a 2x2 maze"),
    ("BossLevel", 4608, "the full grammar in a 3x3 maze"),
    ("BossLevelNoUnlock", 4608, "the full grammar, no locked doors"),
)
"""Upstream id stem (``BabyAI-<stem>-v0``), the step limit and what the task asks."""


def _info(stem: str, steps: int, summary: str) -> MinigridTaskInfo:
    return MinigridTaskInfo(
        name=f"babyai/{task_name(stem)}", gymnasium_id=f"BabyAI-{stem}-v0", max_steps=steps, summary=summary
    )


def _make(info: MinigridTaskInfo, **config: Any) -> MinigridBenchmark:
    EXTRA.require(info.name)
    cfg = GymConfig.model_validate(config)
    import minigrid  # noqa: F401  (registers the BabyAI-* ids with gymnasium)

    return make_minigrid_benchmark(
        info,
        cfg,
        programs=shipped("minigrid"),
        description_extra=" The mission is in BabyAI's grammar; locations are relative to the starting pose.",
    )


_TASKS: Final = tuple(_info(*row) for row in BABYAI_TASKS)
BENCHMARKS: Final[dict[str, Callable[..., MinigridBenchmark]]] = {
    info.name: functools.partial(_make, info) for info in _TASKS
}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(catalog_entry(info, "babyai") for info in _TASKS)
