"""The 19 registered robosuite 1.5.2 manipulation environments with Panda arms, as a static table.

The family runs in a Python environment of its own (``evoledger env install robosuite``: robosuite 1.5.2 pins
numpy < 2), so the Host builds its Benchmarks without importing ``robosuite``: every fact it needs (robots, action
size, the fields of the proprioception and object-state vectors in order) is written here, and
``tests/benchmarks/test_robosuite_venv.py`` checks the table against the real environments inside the family's
venv. :mod:`evoledger.benchmarks.robosuite_manipulation` builds the Benchmarks from it.

Every environment is made as ``robosuite.make(env, robots=["Panda"] (or ["Panda", "Panda"] "opposed"),
controller_configs=<BASIC composite controller: OSC_POSE arm + gripper>, use_camera_obs=False, use_object_obs=True,
reward_shaping=True, horizon=max_episode_steps, seed=...)``, with no renderer. The action per arm is 6 OSC_POSE
deltas (x, y, z, then axis-angle rotation; scaled by the controller to at most 5 cm and 0.5 rad per step) and,
for an arm with a gripper, 1 gripper command (-1 open .. 1 close); all in [-1, 1]. Control runs at 20 steps per
simulated second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ACTION_BOUNDS",
    "CONTROL_FREQUENCY",
    "DEFAULT_STEPS",
    "ROBOSUITE_VERSION",
    "STEP_LIMIT",
    "TASKS",
    "RobosuiteTask",
]

ROBOSUITE_VERSION: Final = "1.5.2"
DEFAULT_STEPS: Final = 500
"""Steps per Episode unless ``--set max_episode_steps=N`` says otherwise (robosuite's default horizon is 1000)."""
STEP_LIMIT: Final = 1000
"""The most steps an Episode may have."""
ACTION_BOUNDS: Final = (-1.0, 1.0)
"""Every action component's range (upstream ``env.action_spec``), for all 19 environments."""
CONTROL_FREQUENCY: Final = 20
"""Policy steps per simulated second (upstream ``control_freq``)."""

Fields = tuple[tuple[str, int], ...]


def _panda(robot: int, *, gripper: bool = True, contact: bool = False) -> Fields:
    """One Panda's ``robot<i>_proprio-state`` fields in upstream order (the observables of modality
    ``robot<i>_proprio``, zero-sized ones left out)."""
    p = f"robot{robot}_"
    fields: list[tuple[str, int]] = [
        (f"{p}joint_pos", 7),
        (f"{p}joint_pos_cos", 7),
        (f"{p}joint_pos_sin", 7),
        (f"{p}joint_vel", 7),
        (f"{p}joint_acc", 7),
        (f"{p}eef_pos", 3),
        (f"{p}eef_quat", 4),
        (f"{p}eef_quat_site", 4),
    ]
    if gripper:
        fields += [(f"{p}gripper_qpos", 2), (f"{p}gripper_qvel", 2)]
    if contact:
        fields.append((f"{p}contact", 1))
    return tuple(fields)


_PANDA: Final = _panda(0)
_PANDA_TWO: Final = _panda(0) + _panda(1)
_PANDA_NO_GRIPPER_TWO: Final = _panda(0, gripper=False) + _panda(1, gripper=False)
_WIPE: Final = _panda(0, gripper=False, contact=True)


@dataclass(frozen=True, slots=True)
class RobosuiteTask:
    """One registered robosuite environment: its name and the facts the Host needs without ``robosuite``."""

    env: str
    """Upstream environment name (``PickPlaceCan``)."""
    robots: int
    """Number of Panda arms (2: the ``opposed`` configuration, robot0 then robot1 in observation and action)."""
    actions: int
    """Action size: per arm 6 OSC_POSE deltas and, with a gripper, 1 gripper command."""
    proprioception: Fields
    """Fields of the ``proprioception`` vector in order (robot0's ``proprio-state``, then robot1's)."""
    objects: Fields
    """Fields of the ``objects`` vector (upstream ``object-state``) in order."""
    summary: str
    """One line: what the task is."""
    sparse: bool = False
    """Whether upstream has no dense reward (``reward_shaping`` is ignored: 1 per step of success, else 0)."""

    @property
    def profile(self) -> str:
        """The environment in kebab case (``pick-place-can``, ``two-arm-peg-in-hole``)."""
        return re.sub(r"(?<!^)(?=[A-Z])", "-", self.env).lower()

    @property
    def name(self) -> str:
        """The registry name, ``robosuite/<profile>``."""
        return f"robosuite/{self.profile}"

    @property
    def proprioception_size(self) -> int:
        return sum(size for _, size in self.proprioception)

    @property
    def objects_size(self) -> int:
        return sum(size for _, size in self.objects)

    @property
    def grippers(self) -> bool:
        """Whether the arms have grippers (the last action component per arm closes them)."""
        return self.actions == 7 * self.robots


TASKS: Final[tuple[RobosuiteTask, ...]] = (
    RobosuiteTask(
        "Lift",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(("cube_pos", 3), ("cube_quat", 4), ("gripper_to_cube_pos", 3)),
        summary="lift the cube off the table",
    ),
    RobosuiteTask(
        "Stack",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("cubeA_pos", 3),
            ("cubeA_quat", 4),
            ("cubeB_pos", 3),
            ("cubeB_quat", 4),
            ("cubeA_to_cubeB", 3),
            ("gripper_to_cubeA", 3),
            ("gripper_to_cubeB", 3),
        ),
        summary="pick up the red cube and stack it on the green one",
    ),
    RobosuiteTask(
        "NutAssembly",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("SquareNut_to_robot0_eef_pos", 3),
            ("SquareNut_to_robot0_eef_quat", 4),
            ("SquareNut_pos", 3),
            ("SquareNut_quat", 4),
            ("RoundNut_to_robot0_eef_pos", 3),
            ("RoundNut_to_robot0_eef_quat", 4),
            ("RoundNut_pos", 3),
            ("RoundNut_quat", 4),
        ),
        summary="fit the square nut onto the square peg and the round nut onto the round peg",
    ),
    RobosuiteTask(
        "NutAssemblySingle",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("nut_to_robot0_eef_pos", 3),
            ("nut_to_robot0_eef_quat", 4),
            ("nut_pos", 3),
            ("nut_quat", 4),
            ("nut_id", 1),
        ),
        summary="fit one nut (square or round, chosen per Episode: nut_id) onto its peg",
    ),
    RobosuiteTask(
        "NutAssemblySquare",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("SquareNut_to_robot0_eef_pos", 3),
            ("SquareNut_to_robot0_eef_quat", 4),
            ("SquareNut_pos", 3),
            ("SquareNut_quat", 4),
        ),
        summary="fit the square nut onto the square peg",
    ),
    RobosuiteTask(
        "NutAssemblyRound",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("RoundNut_to_robot0_eef_pos", 3),
            ("RoundNut_to_robot0_eef_quat", 4),
            ("RoundNut_pos", 3),
            ("RoundNut_quat", 4),
        ),
        summary="fit the round nut onto the round peg",
    ),
    RobosuiteTask(
        "PickPlace",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("Milk_to_robot0_eef_pos", 3),
            ("Milk_to_robot0_eef_quat", 4),
            ("Milk_pos", 3),
            ("Milk_quat", 4),
            ("Bread_to_robot0_eef_pos", 3),
            ("Bread_to_robot0_eef_quat", 4),
            ("Bread_pos", 3),
            ("Bread_quat", 4),
            ("Cereal_to_robot0_eef_pos", 3),
            ("Cereal_to_robot0_eef_quat", 4),
            ("Cereal_pos", 3),
            ("Cereal_quat", 4),
            ("Can_to_robot0_eef_pos", 3),
            ("Can_to_robot0_eef_quat", 4),
            ("Can_pos", 3),
            ("Can_quat", 4),
        ),
        summary="place the milk, bread, cereal and can each into its bin",
    ),
    RobosuiteTask(
        "PickPlaceSingle",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("object_to_robot0_eef_pos", 3),
            ("object_to_robot0_eef_quat", 4),
            ("object_pos", 3),
            ("object_quat", 4),
            ("obj_id", 1),
        ),
        summary="place one object (chosen per Episode: obj_id) into its bin",
    ),
    RobosuiteTask(
        "PickPlaceMilk",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(("Milk_to_robot0_eef_pos", 3), ("Milk_to_robot0_eef_quat", 4), ("Milk_pos", 3), ("Milk_quat", 4)),
        summary="place the milk carton into its bin",
    ),
    RobosuiteTask(
        "PickPlaceBread",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(("Bread_to_robot0_eef_pos", 3), ("Bread_to_robot0_eef_quat", 4), ("Bread_pos", 3), ("Bread_quat", 4)),
        summary="place the bread into its bin",
    ),
    RobosuiteTask(
        "PickPlaceCereal",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("Cereal_to_robot0_eef_pos", 3),
            ("Cereal_to_robot0_eef_quat", 4),
            ("Cereal_pos", 3),
            ("Cereal_quat", 4),
        ),
        summary="place the cereal box into its bin",
    ),
    RobosuiteTask(
        "PickPlaceCan",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(("Can_to_robot0_eef_pos", 3), ("Can_to_robot0_eef_quat", 4), ("Can_pos", 3), ("Can_quat", 4)),
        summary="place the can into its bin",
    ),
    RobosuiteTask(
        "Door",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("door_pos", 3),
            ("handle_pos", 3),
            ("hinge_qpos", 1),
            ("door_to_eef_pos", 3),
            ("handle_to_eef_pos", 3),
            ("handle_qpos", 1),
        ),
        summary="grasp the handle, turn it and open the door",
    ),
    RobosuiteTask(
        "Wipe",
        robots=1,
        actions=6,
        proprioception=_WIPE,
        objects=(("proportion_wiped", 1), ("wipe_radius", 1), ("wipe_centroid", 3), ("gripper_to_wipe_centroid", 3)),
        summary="wipe the markings off the table with the wiping tool (no gripper; ends early on success, arm-table "
        "contact or a joint limit)",
    ),
    RobosuiteTask(
        "ToolHang",
        robots=1,
        actions=7,
        proprioception=_PANDA,
        objects=(
            ("base_to_robot0_eef_pos", 3),
            ("base_to_robot0_eef_quat", 4),
            ("base_pos", 3),
            ("base_quat", 4),
            ("frame_to_robot0_eef_pos", 3),
            ("frame_to_robot0_eef_quat", 4),
            ("frame_pos", 3),
            ("frame_quat", 4),
            ("tool_to_robot0_eef_pos", 3),
            ("tool_to_robot0_eef_quat", 4),
            ("tool_pos", 3),
            ("tool_quat", 4),
            ("frame_is_assembled", 1),
            ("tool_on_frame", 1),
        ),
        summary="insert the stand into its base, then hang the tool on the stand's hook (sparse reward only)",
        sparse=True,
    ),
    RobosuiteTask(
        "TwoArmLift",
        robots=2,
        actions=14,
        proprioception=_PANDA_TWO,
        objects=(
            ("pot_pos", 3),
            ("pot_quat", 4),
            ("handle0_xpos", 3),
            ("handle1_xpos", 3),
            ("gripper0_to_handle0", 3),
            ("gripper1_to_handle1", 3),
        ),
        summary="lift the pot by its two handles, one arm each",
    ),
    RobosuiteTask(
        "TwoArmPegInHole",
        robots=2,
        actions=12,
        proprioception=_PANDA_NO_GRIPPER_TWO,
        objects=(
            ("hole_pos", 3),
            ("hole_quat", 4),
            ("peg_to_hole", 3),
            ("peg_quat", 4),
            ("angle", 1),
            ("t", 1),
            ("d", 1),
        ),
        summary="insert the peg (held by one arm) into the hole (held by the other); no grippers",
    ),
    RobosuiteTask(
        "TwoArmHandover",
        robots=2,
        actions=14,
        proprioception=_PANDA_TWO,
        objects=(
            ("hammer_pos", 3),
            ("hammer_quat", 4),
            ("handle_xpos", 3),
            ("gripper0_to_handle", 3),
            ("gripper1_to_handle", 3),
        ),
        summary="lift the hammer with one arm and hand it over to the other",
    ),
    RobosuiteTask(
        "TwoArmTransport",
        robots=2,
        actions=14,
        proprioception=_PANDA_TWO,
        objects=(
            ("payload_pos", 3),
            ("payload_quat", 4),
            ("trash_pos", 3),
            ("trash_quat", 4),
            ("lid_handle_pos", 3),
            ("lid_handle_quat", 4),
            ("target_bin_pos", 3),
            ("trash_bin_pos", 3),
            ("payload_in_target_bin", 1),
            ("trash_in_trash_bin", 1),
            ("gripper0_to_payload", 3),
            ("gripper0_to_lid_handle", 3),
            ("gripper1_to_payload", 3),
            ("gripper1_to_trash", 3),
        ),
        summary="move the payload into the target bin after clearing the trash into the trash bin (sparse reward only)",
        sparse=True,
    ),
)
"""The 19 environments, single-arm first (in the reference harness's order); object fields as upstream names them
(``NutAssemblySingle`` / ``PickPlaceSingle`` pick their object per Episode: ``nut`` / ``object`` stand for it)."""
