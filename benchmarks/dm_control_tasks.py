"""The 28 DeepMind Control Suite benchmarking tasks (``suite.BENCHMARKING``) as a static table.

The family runs in a Python environment of its own (``evoledger env install dm-control``), so the Host builds its
Benchmarks without importing ``dm_control``: every fact it needs (observation fields and shapes, action size and
bounds, seconds per step) is written here, and ``tests/benchmarks/test_dm_control_venv.py`` checks the table
against the real environments inside the family's venv. :mod:`evoledger.benchmarks.dm_control_suite` builds the
Benchmarks from it.

Every task is upstream's: 1000 steps (the suite's time limit), rewards in [0, 1] per step (so returns lie in
[0, 1000]), observations float64 arrays, actions float64 in [-1, 1] per actuator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["ACTION_BOUNDS", "METRICS", "STEP_LIMIT", "TASKS", "DmControlTask"]

STEP_LIMIT: Final = 1000
"""Steps per Episode: the suite's time limit divided by its control time step, the same for all 28 tasks."""
ACTION_BOUNDS: Final = (-1.0, 1.0)
"""Every actuator's range (upstream ``action_spec()``), for all 28 tasks."""

METRICS: Final[dict[str, str]] = {
    "tip_to_target": "distance from the tip to the target (m)",
    "ball_in_cup": "1 while the ball is inside the cup, else 0",
    "ball_to_cup": "distance from the ball to the cup's target point (m)",
    "pole_cos": "cosine of the pole angle (1 = upright, -1 = hanging down)",
    "cart_position": "cart position (m; 0 = centre; sparse tasks reward only |x| < 0.25)",
    "speed": "forward speed (m/s)",
    "hinge_velocity": "angular velocity of the spinning body (rad/s; -15 or below is rewarded: spin it negatively)",
    "dist_to_target": "distance from the body's tip to the target's edge (m; 0 or below = inside, rewarded)",
    "upright": "cosine of the body's tilt (1 = upright)",
    "mouth_to_target": "distance from the fish's mouth to the target (m)",
    "height": "torso height (m)",
    "head_height": "head height (m; standing is about 1.4)",
    "ball_to_target": "distance from the ball to the target (m)",
    "mass_to_target": "distance from the point mass to the target (m)",
    "finger_to_target": "distance from the fingertip to the target (m)",
    "nose_to_target": "distance from the swimmer's nose to the target (m)",
}
"""Per-step physics metrics (name: meaning); each task records the ones :attr:`DmControlTask.metrics` lists."""


@dataclass(frozen=True, slots=True)
class DmControlTask:
    """One task of ``suite.BENCHMARKING``: its names and the facts the Host needs without ``dm_control``."""

    domain: str
    """Upstream domain (``ball_in_cup``)."""
    task: str
    """Upstream task (``catch``)."""
    actions: int
    """Number of actuators (the action is a float64 vector of this length)."""
    observation: tuple[tuple[str, tuple[int, ...]], ...]
    """Observation fields in upstream order: name and shape (``()`` for a scalar)."""
    control_timestep: float
    """Seconds of simulated time per step."""
    summary: str
    """One line: what the task rewards."""
    metrics: tuple[str, ...]
    """Physics metrics recorded per step (keys of :data:`METRICS`)."""
    sparse: bool = False
    """Whether the reward is 0/1 (a success indicator) rather than shaped."""

    @property
    def name(self) -> str:
        """The registry name, ``dm-control/<domain>-<task>`` in kebab case (``dm-control/ball-in-cup-catch``)."""
        return f"dm-control/{self.profile}"

    @property
    def profile(self) -> str:
        """``<domain>-<task>`` in kebab case (``ball-in-cup-catch``)."""
        return f"{self.domain}-{self.task}".replace("_", "-")


_ACROBOT: Final = (("orientations", (4,)), ("velocity", (2,)))
_CARTPOLE: Final = (("position", (3,)), ("velocity", (2,)))
_FINGER: Final = (("position", (4,)), ("velocity", (3,)), ("touch", (2,)))
_FINGER_TURN: Final = (*_FINGER, ("target_position", (2,)), ("dist_to_target", ()))
_HOPPER: Final = (("position", (6,)), ("velocity", (7,)), ("touch", (2,)))
_HUMANOID: Final = (
    ("joint_angles", (21,)),
    ("head_height", ()),
    ("extremities", (12,)),
    ("torso_vertical", (3,)),
    ("com_velocity", (3,)),
    ("velocity", (27,)),
)
_REACHER: Final = (("position", (2,)), ("to_target", (2,)), ("velocity", (2,)))
_WALKER: Final = (("orientations", (14,)), ("height", ()), ("velocity", (9,)))
_LOCOMOTION: Final = ("height", "speed", "upright")


def _task(
    domain: str,
    task: str,
    actions: int,
    observation: tuple[tuple[str, tuple[int, ...]], ...],
    dt: float,
    summary: str,
    metrics: tuple[str, ...],
    *,
    sparse: bool = False,
) -> DmControlTask:
    return DmControlTask(domain, task, actions, observation, dt, summary, metrics, sparse)


TASKS: Final[tuple[DmControlTask, ...]] = (
    _task(
        "acrobot", "swingup", 1, _ACROBOT, 0.01,
        "swing the two-link acrobot up (one motor at the elbow) and keep its tip near the target above",
        ("tip_to_target",),
    ),
    _task(
        "acrobot", "swingup_sparse", 1, _ACROBOT, 0.01,
        "acrobot swing-up; reward 1 only while the tip is inside the target",
        ("tip_to_target",), sparse=True,
    ),
    _task(
        "ball_in_cup", "catch", 2, (("position", (4,)), ("velocity", (4,))), 0.02,
        "move the cup (x, z) so the ball on its string lands in it; reward 1 while the ball is in the cup",
        ("ball_in_cup", "ball_to_cup"), sparse=True,
    ),
    _task(
        "cartpole", "balance", 1, _CARTPOLE, 0.01,
        "keep the pole, starting near upright, balanced with the cart near the centre",
        ("pole_cos", "cart_position"),
    ),
    _task(
        "cartpole", "balance_sparse", 1, _CARTPOLE, 0.01,
        "cart-pole balance; reward 1 while the pole is upright and the cart centred",
        ("pole_cos", "cart_position"), sparse=True,
    ),
    _task(
        "cartpole", "swingup", 1, _CARTPOLE, 0.01,
        "swing the pole up from hanging down and balance it, the cart near the centre",
        ("pole_cos", "cart_position"),
    ),
    _task(
        "cartpole", "swingup_sparse", 1, _CARTPOLE, 0.01,
        "cart-pole swing-up; reward 1 only while the pole is upright and the cart centred",
        ("pole_cos", "cart_position"), sparse=True,
    ),
    _task(
        "cheetah", "run", 6, (("position", (8,)), ("velocity", (9,))), 0.01,
        "run the planar cheetah forward; reward grows linearly with speed up to 10 m/s",
        ("speed",),
    ),
    _task(
        "finger", "spin", 2, _FINGER, 0.02,
        "spin the hinged body with the two-joint finger; reward 1 while it turns at 15 rad/s or more (negative sense)",
        ("hinge_velocity",), sparse=True,
    ),
    _task(
        "finger", "turn_easy", 2, _FINGER_TURN, 0.02,
        "turn the hinged body until its tip touches the target (a large target)",
        ("dist_to_target",), sparse=True,
    ),
    _task(
        "finger", "turn_hard", 2, _FINGER_TURN, 0.02,
        "turn the hinged body until its tip touches the target (a small target)",
        ("dist_to_target",), sparse=True,
    ),
    _task(
        "fish", "upright", 5, (("joint_angles", (7,)), ("upright", ()), ("velocity", (13,))), 0.04,
        "turn the fish upright in the water (five fin and tail actuators)",
        ("upright",),
    ),
    _task(
        "fish", "swim", 5,
        (("joint_angles", (7,)), ("upright", ()), ("target", (3,)), ("velocity", (13,))), 0.04,
        "swim the fish's mouth to the target, staying upright",
        ("upright", "mouth_to_target"),
    ),
    _task(
        "hopper", "stand", 4, _HOPPER, 0.02,
        "stand the one-legged hopper up, torso high and upright",
        ("height", "speed"),
    ),
    _task(
        "hopper", "hop", 4, _HOPPER, 0.02,
        "hop the one-legged hopper forward, torso high; reward grows with speed up to 2 m/s",
        ("height", "speed"),
    ),
    _task(
        "humanoid", "stand", 21, _HUMANOID, 0.025,
        "stand the 21-actuator humanoid up, head high and torso upright, moving little",
        ("head_height", "speed", "upright"),
    ),
    _task(
        "humanoid", "walk", 21, _HUMANOID, 0.025,
        "walk the humanoid forward at 1 m/s, standing",
        ("head_height", "speed", "upright"),
    ),
    _task(
        "humanoid", "run", 21, _HUMANOID, 0.025,
        "run the humanoid forward at 10 m/s, standing",
        ("head_height", "speed", "upright"),
    ),
    _task(
        "manipulator", "bring_ball", 5,
        (
            ("arm_pos", (8, 2)),
            ("arm_vel", (8,)),
            ("touch", (5,)),
            ("hand_pos", (4,)),
            ("object_pos", (4,)),
            ("object_vel", (3,)),
            ("target_pos", (4,)),
        ),
        0.01,
        "grasp the ball with the planar arm's gripper and bring it to the target",
        ("ball_to_target",),
    ),
    _task(
        "pendulum", "swingup", 1, (("orientation", (2,)), ("velocity", (1,))), 0.02,
        "swing the torque-limited pendulum up and hold it within 8 degrees of upright (reward 1 there)",
        ("pole_cos",), sparse=True,
    ),
    _task(
        "point_mass", "easy", 2, (("position", (2,)), ("velocity", (2,))), 0.02,
        "push the point mass to the target at the centre of the plane, with small controls",
        ("mass_to_target",),
    ),
    _task(
        "reacher", "easy", 2, _REACHER, 0.02,
        "move the two-link arm's fingertip onto the target (a large target); reward 1 while touching it",
        ("finger_to_target",), sparse=True,
    ),
    _task(
        "reacher", "hard", 2, _REACHER, 0.02,
        "move the two-link arm's fingertip onto the target (a small target); reward 1 while touching it",
        ("finger_to_target",), sparse=True,
    ),
    _task(
        "swimmer", "swimmer6", 5, (("joints", (5,)), ("to_target", (2,)), ("body_velocities", (18,))), 0.03,
        "swim the six-link swimmer's nose to the target",
        ("nose_to_target",),
    ),
    _task(
        "swimmer", "swimmer15", 14, (("joints", (14,)), ("to_target", (2,)), ("body_velocities", (45,))), 0.03,
        "swim the fifteen-link swimmer's nose to the target",
        ("nose_to_target",),
    ),
    _task(
        "walker", "stand", 6, _WALKER, 0.025,
        "stand the planar biped up, torso high and upright",
        _LOCOMOTION,
    ),
    _task(
        "walker", "walk", 6, _WALKER, 0.025,
        "walk the planar biped forward at 1 m/s, standing",
        _LOCOMOTION,
    ),
    _task(
        "walker", "run", 6, _WALKER, 0.025,
        "run the planar biped forward at 8 m/s, standing",
        _LOCOMOTION,
    ),
)  # fmt: skip
"""All 28, in ``suite.BENCHMARKING`` order."""
