"""The 21 Gymnasium-Robotics profiles: names, upstream ids, step limits, score kinds and what each observes.

:mod:`evoledger.benchmarks.robotics` builds Benchmarks from these facts; nothing here imports gymnasium-robotics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["KINDS", "TASKS", "RoboticsTask", "ScoreKind"]

ScoreKind = Literal["success", "return", "tasks"]
"""How an Episode's return is made: ``success`` 1 when upstream's success flag holds at the last step, else 0
(so the score is the success rate); ``return`` upstream's own (dense) reward; ``tasks`` the number of kitchen tasks
completed (upstream's reward)."""


@dataclass(frozen=True, slots=True)
class RoboticsTask:
    """The facts of one profile that do not depend on its settings."""

    task: str
    """The task part of the name (``fetch-reach`` in ``robotics/fetch-reach``)."""
    gymnasium_id: str
    kind: str
    """The environment group: ``fetch``, ``maze``, ``adroit``, ``hand-reach``, ``hand-manipulate`` or ``kitchen``."""
    steps: int
    """Upstream's step limit (the default ``max_episode_steps``)."""
    summary: str
    observation: str
    """What the observation holds, for the description."""

    @property
    def name(self) -> str:
        """The registry name, ``robotics/<task>``."""
        return f"robotics/{self.task}"

    @property
    def score_kind(self) -> ScoreKind:
        """See :data:`ScoreKind`: Adroit keeps its dense return, the kitchen counts tasks, the rest score success."""
        return "return" if self.kind == "adroit" else ("tasks" if self.kind == "kitchen" else "success")

    @property
    def failure_return(self) -> float:
        """What an Episode the Policy failed counts: 0 (an unsuccessful Episode) for success scores, -1 for the
        kitchen, -1,000,000 for Adroit's dense return (far below any running Policy: its worst is about -1,200)."""
        return {"success": 0.0, "tasks": -1.0, "return": -1_000_000.0}[self.score_kind]


_FETCH_ACTION = (
    "Action: 4 floats in [-1, 1]: the gripper's x, y, z displacement (1 = 5 cm per step, in the world frame) and "
    "the fingers (positive opens, negative closes)."
)
_FETCH_OBJECT = (
    "Observation: a dict; observation float64 [25]: gripper position xyz (0-2), object position xyz (3-5), object "
    "relative to the gripper (6-8), finger widths (9-10), object rotation (11-13), object linear and angular velocity "
    "(14-19), gripper velocity (20-22), finger velocities (23-24); achieved_goal [3]: the object's position; "
    "desired_goal [3]: the target. Success: the object within 5 cm of the target. " + _FETCH_ACTION
)
_MAZE = (
    "The U-shaped maze (map rows top to bottom, 1 = wall: 11111 / 10001 / 11101 / 10001 / 11111; cells of {size} m, "
    "centred on the origin: cell (row i, column j) has its centre at x = (j - 2) * {size}, y = (2 - i) * {size}). "
)
_HAND_ACTION = "Action: 20 floats in [-1, 1], absolute joint position targets of the Shadow hand's actuators."
_HAND_MANIPULATE = (
    "Observation: a dict; observation float64 [{size}]: 24 joint angles, 24 joint velocities, the object's linear "
    "and angular velocity (6), its position and quaternion (7){touch}; achieved_goal [7] the object's position and "
    "quaternion; desired_goal [7] the target's. Success: position within 1 cm and rotation within 0.1 rad. "
    + _HAND_ACTION
)
_ADROIT = "Dense upstream reward; Success (reported, not scored): upstream's success flag on the last step. "


def _hand(obj: str, touch: str) -> RoboticsTask:
    sensors = {
        "": ("", 61, "", ""),
        "boolean-touch": ("_BooleanTouchSensors", 153, ", then 92 touch sensors (0 or 1)", " with 92 boolean touch"),
        "continuous-touch": ("_ContinuousTouchSensors", 153, ", then 92 touch sensor forces", " with 92 touch forces"),
    }[touch]
    suffix, size, observed, words = sensors
    return RoboticsTask(
        task=f"hand-manipulate-{obj}" + (f"-{touch}" if touch else ""),
        gymnasium_id=f"HandManipulate{obj.capitalize()}{suffix}-v1",
        kind="hand-manipulate",
        steps=100,
        summary=f"turn a {obj} in the Shadow hand to a random target position and orientation{words}",
        observation=_HAND_MANIPULATE.format(size=size, touch=observed),
    )


TASKS: Final[tuple[RoboticsTask, ...]] = (
    RoboticsTask(
        "fetch-reach",
        "FetchReach-v4",
        "fetch",
        50,
        "move the Fetch arm's gripper to a random target in the air",
        "Observation: a dict; observation float64 [10]: gripper position xyz (0-2), finger widths (3-4), gripper "
        "velocity (5-7), finger velocities (8-9); achieved_goal [3]: the gripper's position; desired_goal [3]: the "
        "target. Success: the gripper within 5 cm of the target. " + _FETCH_ACTION,
    ),
    RoboticsTask("fetch-push", "FetchPush-v4", "fetch", 50, "push a block on a table to a target", _FETCH_OBJECT),
    RoboticsTask(
        "fetch-slide",
        "FetchSlide-v4",
        "fetch",
        50,
        "hit a puck so it slides to a target out of the arm's reach",
        _FETCH_OBJECT.replace("object", "puck"),
    ),
    RoboticsTask(
        "fetch-pick-and-place",
        "FetchPickAndPlace-v4",
        "fetch",
        50,
        "pick a block up and place it at a target (on the table or in the air)",
        _FETCH_OBJECT,
    ),
    RoboticsTask(
        "point-maze-umaze",
        "PointMaze_UMaze-v3",
        "maze",
        300,
        "steer a point mass through the U maze to a goal",
        _MAZE.format(size=1)
        + "Observation: a dict; observation float64 [4]: x, y, vx, vy; achieved_goal [2]: x, y; desired_goal [2]: the "
        "goal. Action: 2 forces in [-1, 1] (x, y). Success: within 0.45 m of the goal; the goal stays and the "
        "Episode does not end when it is reached.",
    ),
    RoboticsTask(
        "ant-maze-umaze",
        "AntMaze_UMaze-v5",
        "maze",
        700,
        "make the Ant walk through the U maze to a goal",
        _MAZE.format(size=4)
        + "Observation: a dict; observation float64 [105]: the Ant's state without x, y (torso z, orientation, 8 "
        "joint angles, 14 velocities, 78 contact forces); achieved_goal [2]: the torso's x, y; desired_goal [2]: the "
        "goal. Action: 8 joint torques in [-1, 1]. Success: within 0.45 m of the goal.",
    ),
    *(
        RoboticsTask(
            f"adroit-{obj}",
            f"AdroitHand{obj.capitalize()}-v1",
            "adroit",
            200,
            summary,
            f"Observation: float64 [{size}]: the arm and hand joint angles, then the task's state (palm, object, "
            "target positions and orientations, as upstream's documentation lists entry by entry). Action: "
            f"{actions} floats in [-1, 1], position targets of the arm and hand actuators (upstream maps [-1, 1] onto "
            "each joint's range). " + _ADROIT,
        )
        for obj, size, actions, summary in (
            ("door", 39, 28, "open a door with the 24-joint Adroit hand on an arm: undo the latch, swing the door"),
            ("hammer", 46, 26, "pick up a hammer with the Adroit hand and drive a nail into a board"),
            ("pen", 45, 24, "rotate a pen in the Adroit hand to a random target orientation"),
            ("relocate", 39, 30, "pick up a ball with the Adroit hand and move it to a random target"),
        )
    ),
    RoboticsTask(
        "hand-reach",
        "HandReach-v3",
        "hand-reach",
        50,
        "move the Shadow hand's five fingertips to random target positions",
        "Observation: a dict; observation float64 [63]: 24 joint angles, 24 joint velocities, the 5 fingertips' xyz "
        "(15); achieved_goal [15]: the fingertips' xyz; desired_goal [15]: their targets. Success: the distance "
        "between the two 15-vectors below 1 cm. " + _HAND_ACTION,
    ),
    *(_hand(obj, touch) for touch in ("", "boolean-touch", "continuous-touch") for obj in ("block", "egg", "pen")),
    RoboticsTask(
        "franka-kitchen",
        "FrankaKitchen-v1",
        "kitchen",
        280,
        "complete seven kitchen tasks with a Franka arm: microwave, kettle, light switch, burners, cabinets",
        "Observation: a dict; observation float64 [59]: 9 robot joint angles, 9 robot joint velocities, 21 object "
        "joint positions, 20 object velocities; achieved_goal and desired_goal: dicts by task (bottom burner [2], "
        "hinge cabinet [2], kettle [7], light switch [2], microwave [1], slide cabinet [1], top burner [2]). A task "
        "completes when its joints are within 0.3 of the goal; reward +1 per newly completed task; the Episode ends "
        "when all seven are done. Action: 9 floats in [-1, 1] (7 arm joint velocities, 2 finger velocities).",
    ),
)
"""Every profile, in registry order."""

KINDS: Final = ("fetch", "maze", "adroit", "hand-reach", "hand-manipulate", "kitchen")
