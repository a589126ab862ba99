"""Heuristic Policy of ``robosuite/two-arm-transport``: robot0 lifts the lid off the start bin, picks the hammer
(the payload) up and holds it over the middle; robot1 meanwhile drops the trash cube into the trash bin, then takes
the hammer from robot0 and lowers it into the target bin.

Everything comes from the observation through ``context.metadata``: each hand's position and orientation
(``robot<i>_eef_pos``, ``robot<i>_eef_quat`` x y z w) from ``proprioception``; from ``objects`` the lid handle's,
trash's and hammer's positions (``lid_handle_pos``, ``trash_pos``, ``payload_pos``), the hammer's orientation
(``payload_quat``, x y z w: its handle runs along its own z axis, the head at the +z end) and the two bins'
positions (``target_bin_pos``, ``trash_bin_pos``). The arms stand ``opposed`` and take position deltas in their own
base frames: robot0 faces +y, robot1 faces -y (:data:`BASE_YAW`); rotation about the vertical is the same in both.

Robot0: grasp the lid handle (it runs along y), carry the lid to LID_DROP and open; grasp the hammer's handle
PAYLOAD_GRIP metres from its centre toward the head (near its centre of mass), lift it straight up to LIFT_Z (out
of the bin) and bring it to MEET, turning it about the vertical so that its head does not point at robot1; open
once robot1 holds it, and move up and back. Robot1: grasp the trash, carry it over the trash bin and open; wait at
WAIT; once the hammer is at MEET (or after BRING_STEPS), grasp its handle TAKE_GRIP metres from its centre on the
side away from robot0's hand; once robot0 has let go, carry it above the target bin (over CARRY_Z) and open.
Every move goes over SAFE_Z first, so no hand drags through a bin wall.

Upstream scores only success (the hammer touching the target bin's floor while the trash touches the trash bin's),
1 per step from then on, so an Episode earns nothing until the very end of the sequence. The handover is the
fragile part: the pinched hammer swings about the fingers as it is lifted and robot1 sometimes cannot reach its
grip point; ``evoledger evaluate`` numbers are in the robosuite module's docstring.
"""

import math
from typing import Any

import numpy as np

GAIN = 12.0
YAW_GAIN = 2.0
BASE_YAW = (math.pi / 2, -math.pi / 2)  # each arm's base frame, measured from the world's x axis
HOVER = 0.08
CLOSE_STEPS = 8
DESCEND_STEPS = 30
APPROACH_STEPS = 40
SAFE_Z = 1.05
LID_DROP = np.array([-0.25, -0.45, 1.05])
PAYLOAD_GRIP = 0.045
TAKE_GRIP = 0.05
LIFT_Z = 1.12
MEET = np.array([0.0, 0.0, 1.05])
WAIT = np.array([0.0, 0.15, 1.15])
TURN_TOLERANCE = 0.25
MEET_TOLERANCE = 0.04
BRING_STEPS = 80
HEAD_YAW = 0.3  # when the head points at robot1, turn it to point along x, this far toward robot0
TRASH_HEIGHT = 0.2
PLACE_HEIGHT = 0.12
PLACE_TOLERANCE = 0.04
CARRY_Z = 1.15


def _axis(quat: Any) -> Any:
    """The hammer's own z axis in the world (from the handle toward the head)."""
    x, y, z, w = (float(v) for v in quat)
    return np.array([2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)])


def _yaw(quat: Any) -> float:
    x, y, z, w = (float(v) for v in quat)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _wrap(angle: float, period: float) -> float:
    return (angle + period / 2) % period - period / 2


class Arm:
    """One arm: move (and turn) its hand to targets in the world frame, in its own base frame."""

    def __init__(self, metadata: Any, i: int) -> None:
        proprio = metadata["proprioception_fields"]
        self.eef = slice(*proprio[f"robot{i}_eef_pos"])
        self.quat = slice(*proprio[f"robot{i}_eef_quat"])
        c, s = math.cos(BASE_YAW[i]), math.sin(BASE_YAW[i])
        self.to_base = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
        self.phase = "approach"
        self.count = 0

    def restart(self) -> None:
        self.phase, self.count = "approach", 0

    def position(self, observation: Any) -> Any:
        return observation["proprioception"][self.eef]

    def move(self, observation: Any, target: Any, gripper: float, yaw: float | None = None) -> Any:
        eef = self.position(observation)
        out = np.zeros(7, dtype=np.float64)
        out[:3] = np.clip(GAIN * (self.to_base @ (target - eef)), -1.0, 1.0)
        if yaw is not None:
            out[5] = float(np.clip(YAW_GAIN * self.yaw_error(observation, yaw), -1.0, 1.0))
        out[6] = gripper
        return out

    def hold(self, observation: Any, gripper: float) -> Any:
        return self.move(observation, self.position(observation), gripper)

    def yaw_error(self, observation: Any, yaw: float) -> float:
        return _wrap(yaw - _yaw(observation["proprioception"][self.quat]), math.pi)

    def carry(
        self, observation: Any, target: Any, gripper: float, safe: float = SAFE_Z, tolerance: float = 0.02
    ) -> tuple[Any, bool]:
        """Move to ``target`` over the height ``safe``; also whether the hand is within ``tolerance`` of it."""
        eef = self.position(observation)
        goal = np.array(target, dtype=np.float64)
        if np.linalg.norm((goal - eef)[:2]) > 0.03:
            goal = (
                np.array([eef[0], eef[1], safe]) if eef[2] < safe - 0.03 else np.array([*goal[:2], max(goal[2], safe)])
            )
        return self.move(observation, goal, gripper), bool(np.linalg.norm(target - eef) < tolerance)

    def grasp(self, observation: Any, point: Any, yaw: float) -> Any:
        """Approach above ``point`` (over SAFE_Z), descend, close; then ``phase`` is ``held``."""
        eef = self.position(observation)
        if self.phase == "approach":
            above = point + np.array([0.0, 0.0, HOVER])
            if np.linalg.norm((above - eef)[:2]) > 0.03:
                above[2] = max(above[2], SAFE_Z)
            self.count += 1
            off = np.linalg.norm((above - eef)[:2]), abs(above[2] - eef[2])
            aligned = off[0] < 0.01 and off[1] < 0.02 and abs(self.yaw_error(observation, yaw)) < 0.05
            if aligned or (off[0] < 0.02 and off[1] < 0.04 and self.count > APPROACH_STEPS):
                self.phase, self.count = "descend", 0
            return self.move(observation, above, -1.0, yaw)
        if self.phase == "descend":
            self.count += 1
            if np.linalg.norm(point - eef) < 0.015 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
            return self.move(observation, point, -1.0, yaw)
        if self.phase == "close":
            self.count += 1
            if self.count >= CLOSE_STEPS:
                self.phase = "held"
        return self.hold(observation, 1.0)


class Transport:
    def __init__(self, metadata: Any) -> None:
        self.fields = {name: slice(*span) for name, span in metadata["object_fields"].items()}
        self.arms = (Arm(metadata, 0), Arm(metadata, 1))
        self.stage0, self.stage1 = "lid", "trash"
        self.count0 = self.count1 = 0
        self.offset = np.zeros(3)  # robot0's hand minus the hammer's centre, once it holds the hammer
        self.lifted = False
        self.heading: float | None = None
        self.bring_steps = 0
        self.turned = False

    def object(self, observation: Any, name: str) -> Any:
        return np.asarray(observation["objects"][self.fields[name]], dtype=np.float64)

    def act(self, observation: Any) -> Any:
        return np.concatenate([self.robot0(observation), self.robot1(observation)])

    def robot0(self, observation: Any) -> Any:
        arm = self.arms[0]
        if self.stage0 == "lid":
            out = arm.grasp(observation, self.object(observation, "lid_handle_pos"), math.pi / 2)
            if arm.phase == "held":
                self.stage0 = "lid_away"
            return out
        if self.stage0 == "lid_away":
            out, there = arm.carry(observation, LID_DROP, 1.0)
            if there:
                self.stage0, self.count0 = "lid_release", 0
            return out
        if self.stage0 == "lid_release":
            self.count0 += 1
            if self.count0 > CLOSE_STEPS:
                self.stage0 = "payload"
                arm.restart()
            return arm.hold(observation, -1.0)
        if self.stage0 == "payload":
            centre, axis = self.object(observation, "payload_pos"), _axis(self.object(observation, "payload_quat"))
            out = arm.grasp(observation, centre + PAYLOAD_GRIP * axis, math.atan2(axis[1], axis[0]))
            if arm.phase == "held":
                self.stage0 = "bring"
                self.offset = arm.position(observation) - centre
            return out
        if self.stage0 == "bring":
            return self.bring(observation, arm)
        if self.stage0 == "release":
            self.count0 += 1
            if self.count0 <= CLOSE_STEPS:
                return arm.hold(observation, -1.0)
            away = arm.position(observation).copy()
            away[1], away[2] = -0.3, 1.2
            return arm.move(observation, away, -1.0)
        return arm.hold(observation, -1.0)

    def bring(self, observation: Any, arm: Arm) -> Any:
        eef = arm.position(observation)
        if not self.lifted and eef[2] < LIFT_Z - 0.02:  # straight up, out of the bin
            return arm.move(observation, np.array([eef[0], eef[1], LIFT_Z]), 1.0)
        self.lifted = True
        axis = _axis(self.object(observation, "payload_quat"))
        if self.heading is None:
            pointing = math.atan2(axis[1], axis[0])
            if axis[1] > 0.0:  # the head points at robot1, whose hand would have to cross robot0's
                pointing = -(HEAD_YAW if axis[0] >= 0 else math.pi - HEAD_YAW)
            self.heading = pointing
        out = arm.move(observation, MEET + self.offset, 1.0)
        error = _wrap(self.heading - math.atan2(axis[1], axis[0]), 2 * math.pi)
        out[5] = float(np.clip(YAW_GAIN * error, -1.0, 1.0))
        self.bring_steps += 1
        self.turned = abs(error) < TURN_TOLERANCE or self.bring_steps > BRING_STEPS
        return out

    def robot1(self, observation: Any) -> Any:
        arm = self.arms[1]
        if self.stage1 == "trash":
            out = arm.grasp(observation, self.object(observation, "trash_pos"), 0.0)
            if arm.phase == "held":
                self.stage1 = "trash_carry"
            return out
        if self.stage1 == "trash_carry":
            above = self.object(observation, "trash_bin_pos") + np.array([0.0, 0.0, TRASH_HEIGHT])
            out, there = arm.carry(observation, above, 1.0)
            if there:
                self.stage1, self.count1 = "trash_drop", 0
            return out
        if self.stage1 == "trash_drop":
            self.count1 += 1
            if self.count1 > CLOSE_STEPS:
                self.stage1 = "wait"
            return arm.hold(observation, -1.0)
        if self.stage1 == "wait":
            out, _ = arm.carry(observation, WAIT, -1.0)
            giver = self.arms[0].position(observation)
            at_meet = np.linalg.norm(MEET + self.offset - giver) < MEET_TOLERANCE or self.bring_steps > BRING_STEPS
            if self.stage0 == "bring" and self.turned and at_meet:
                self.stage1 = "take"
                arm.restart()
            return out
        if self.stage1 == "take":
            centre, axis = self.object(observation, "payload_pos"), _axis(self.object(observation, "payload_quat"))
            side = -1.0 if float(np.dot(self.arms[0].position(observation) - centre, axis)) > 0 else 1.0
            out = arm.grasp(observation, centre + side * TAKE_GRIP * axis, math.atan2(axis[1], axis[0]))
            if arm.phase == "held":
                self.stage1, self.stage0, self.count0 = "handed", "release", 0
            return out
        if self.stage1 == "handed":
            if self.count0 <= CLOSE_STEPS + 5:  # robot0 is still letting go
                return arm.hold(observation, 1.0)
            offset = arm.position(observation) - self.object(observation, "payload_pos")
            above = self.object(observation, "target_bin_pos") + np.array([0.0, 0.0, PLACE_HEIGHT]) + offset
            out, there = arm.carry(observation, above, 1.0, safe=CARRY_Z, tolerance=PLACE_TOLERANCE)
            if there:
                self.stage1 = "place"
            return out
        return arm.hold(observation, -1.0)


def make_policy(context: Any) -> Any:
    return Transport(context.metadata)
