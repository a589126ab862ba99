"""The 50 MetaWorld V3 tasks (MT1), MT10 and MT50 as a static table.

The family runs in a Python environment of its own (``evoledger env install metaworld``: metaworld 3.1.1 pins
mujoco 3.3.0, the main environment has MuJoCo 4), so the Host builds its Benchmarks without importing ``metaworld``:
every fact it needs (task names in upstream order, the MT10 subset, the observation layout and bounds, the action
bounds, the step limit) is written here, and ``tests/benchmarks/test_metaworld_venv.py`` checks the table against
the real package inside the family's venv. :mod:`evoledger.benchmarks.metaworld_suite` builds the Benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "ACTION_BOUNDS",
    "COLLECTIONS",
    "HAND_HIGH",
    "HAND_LOW",
    "MT10",
    "OBSERVATION_LAYOUT",
    "OBSERVATION_SIZE",
    "STEP_LIMIT",
    "TASKS",
    "MetaWorldTask",
]

STEP_LIMIT: Final = 500
"""Steps per Episode: upstream's ``max_path_length``, the same for all 50 tasks (stepping past it raises)."""
ACTION_BOUNDS: Final = (-1.0, 1.0)
"""Every action component's range: end-effector dx, dy, dz (scaled by upstream to 1 cm per unit) and gripper."""
OBSERVATION_SIZE: Final = 39
"""Length of upstream's float64 observation."""
HAND_LOW: Final = (-0.525, 0.348, -0.0525)
"""Upstream's ``_HAND_SPACE`` lower bound (m) for the hand position (observation 0:3 and 18:21)."""
HAND_HIGH: Final = (0.525, 1.025, 0.7)
"""Upstream's ``_HAND_SPACE`` upper bound (m)."""
OBSERVATION_LAYOUT: Final = (
    "0:3 hand (end-effector) position xyz (m); 3 gripper opening (0 closed .. 1 open); 4:7 first object position; "
    "7:11 first object quaternion; 11:14 second object position; 14:18 second object quaternion (zeros when the "
    "task has one object); 18:36 the same 18 numbers one step earlier; 36:39 goal position xyz (m)"
)
"""What each slice of the 39 numbers means (upstream's ``_get_obs``: current frame, previous frame, goal)."""


@dataclass(frozen=True, slots=True)
class MetaWorldTask:
    """One MetaWorld V3 task: its kebab name and what it asks."""

    task: str
    """Upstream's name without the version (``pick-place``); upstream's id is :attr:`upstream`."""
    summary: str
    """One line: what the task asks."""

    @property
    def upstream(self) -> str:
        """Upstream's environment name (``pick-place-v3``)."""
        return f"{self.task}-v3"

    @property
    def name(self) -> str:
        """The registry name (``metaworld/pick-place``)."""
        return f"metaworld/{self.task}"


TASKS: Final[tuple[MetaWorldTask, ...]] = tuple(
    MetaWorldTask(task, summary)
    for task, summary in (
        ("assembly", "pick up the nut by its handle and place it over the peg"),
        ("basketball", "pick up the ball and drop it into the basket"),
        ("bin-picking", "grasp the cube in the left bin and place it in the right bin"),
        ("box-close", "grasp the lid and put it on the box"),
        ("button-press-topdown", "press the button from the top"),
        ("button-press-topdown-wall", "press the button from the top, a short wall in the way"),
        ("button-press", "press the button facing the arm, moving forward"),
        ("button-press-wall", "press the button behind a short wall"),
        ("coffee-button", "push the button on the coffee machine"),
        ("coffee-pull", "pull the mug out from under the coffee machine to the goal"),
        ("coffee-push", "push the mug under the coffee machine"),
        ("dial-turn", "rotate the dial 180 degrees"),
        ("disassemble", "pick the nut off the peg"),
        ("door-close", "close the open door (a revolving joint)"),
        ("door-lock", "lock the door by rotating the lock clockwise"),
        ("door-open", "open the door (a revolving joint)"),
        ("door-unlock", "unlock the door by rotating the lock counter-clockwise"),
        ("hand-insert", "push the block into the hole in the table"),
        ("drawer-close", "push the drawer closed"),
        ("drawer-open", "pull the drawer open"),
        ("faucet-open", "rotate the faucet handle counter-clockwise"),
        ("faucet-close", "rotate the faucet handle clockwise"),
        ("hammer", "pick up the hammer and hammer the nail into the wall"),
        ("handle-press-side", "press the handle down, from the side"),
        ("handle-press", "press the handle down"),
        ("handle-pull-side", "pull the handle up, from the side"),
        ("handle-pull", "pull the handle up"),
        ("lever-pull", "pull the lever up 90 degrees"),
        ("pick-place-wall", "pick up the puck and place it at the goal, over a short wall"),
        ("pick-out-of-hole", "pick the peg out of the hole"),
        ("pick-place", "pick up the puck and place it at the goal"),
        ("plate-slide", "slide the plate into the cabinet"),
        ("plate-slide-side", "slide the plate sideways into the cabinet"),
        ("plate-slide-back", "slide the plate out of the cabinet"),
        ("plate-slide-back-side", "slide the plate sideways out of the cabinet"),
        ("peg-insert-side", "insert the peg sideways into the hole"),
        ("peg-unplug-side", "unplug the peg sideways"),
        ("soccer", "kick the ball into the goal"),
        ("stick-push", "grasp the stick and push the box with it to the goal"),
        ("stick-pull", "grasp the stick and pull the box with it to the goal"),
        ("push", "push the puck to the goal"),
        ("push-wall", "push the puck to the goal, around a short wall"),
        ("push-back", "push the puck back to the goal"),
        ("reach", "reach the goal position with the hand"),
        ("reach-wall", "reach the goal position over a short wall"),
        ("shelf-place", "pick up the puck and place it on the shelf"),
        ("sweep-into", "sweep the puck into the hole"),
        ("sweep", "sweep the puck off the table"),
        ("window-open", "push the window open (sliding)"),
        ("window-close", "push the window closed (sliding)"),
    )
)
"""All 50, in upstream's ``ALL_V3_ENVIRONMENTS`` order."""

MT10: Final[tuple[str, ...]] = (
    "reach",
    "push",
    "pick-place",
    "door-open",
    "drawer-open",
    "drawer-close",
    "button-press-topdown",
    "peg-insert-side",
    "window-open",
    "window-close",
)
"""Upstream's MT10 tasks, in its order (a task's index here is its position in the one-hot ``task``)."""

COLLECTIONS: Final[dict[str, tuple[str, ...]]] = {"mt10": MT10, "mt50": tuple(t.task for t in TASKS)}
"""The multi-task collections (``metaworld/mt10``, ``metaworld/mt50``): their tasks in one-hot order."""
