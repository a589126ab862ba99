"""Heuristic Policy of the nut-assembly tasks (``robosuite/nut-assembly*``): turn the open gripper to the nut's
yaw, move it above the nut's handle, descend, close, lift the nut above the pegs, carry it so that its centre is
above its peg, lower it around the peg and let go; ``nut-assembly`` (both nuts) does the square nut, then the round.

Everything comes from the observation through ``context.metadata``: the hand's position (``robot0_eef_pos``) and
orientation (``robot0_eef_quat``, x y z w) from ``proprioception``; each nut's centre (``<nut>_pos``) and yaw (from
``<nut>_quat``, x y z w) from ``objects``. The handle lies :data:`HANDLE` metres from the nut's centre along the
nut's own x axis; the pegs stand at fixed places (:data:`PEGS`, upstream's ``peg1`` and ``peg2``). Position deltas
are ``GAIN * error`` clipped to [-1, 1]; the only rotation is about the vertical (the sixth action component).
"""

import math
from typing import Any

import numpy as np

GAIN = 12.0
YAW_GAIN = 2.0
FINGERS = 0.0  # the gripper's yaw relative to the handle's axis at the grasp
HANDLE = {"SquareNut": 0.054, "RoundNut": 0.06}
"""Metres from the nut's centre to its handle, along the nut's x axis (upstream's ``handle`` site)."""
PEGS = {"SquareNut": (0.23, 0.1), "RoundNut": (0.23, -0.1)}
"""Where each nut's peg stands (x, y); the peg of the square nut is upstream's ``peg1``."""
HOVER = 0.06  # metres above the handle before descending
CARRY = 1.05  # the nut's height while carrying it over the pegs
DOWN = 0.845  # lower the nut until its centre is this low (success: below 0.87 around the peg)
CLOSE_STEPS = 10
DESCEND_STEPS = 40
LOWER_STEPS = 30  # let go anyway after this many steps of lowering (the nut caught on the peg's top)
RELEASE_STEPS = 10
MISSED = 0.06  # the hand this far above the nut's centre while lifting or carrying: the grasp missed


def _yaw(quat: Any) -> float:
    x, y, z, w = (float(v) for v in quat)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _wrap(angle: float, period: float) -> float:
    """``angle`` wrapped to [-period / 2, period / 2)."""
    return (angle + period / 2) % period - period / 2


class Nut:
    def __init__(self, metadata: Any, nut: str, field: str) -> None:
        proprio, objects = metadata["proprioception_fields"], metadata["object_fields"]
        self.eef = slice(*proprio["robot0_eef_pos"])
        self.eef_quat = slice(*proprio["robot0_eef_quat"])
        self.pos = slice(*objects[f"{field}_pos"])
        self.quat = slice(*objects[f"{field}_quat"])
        self.nut = nut
        self.phase = "approach"
        self.count = 0
        self.yaw_goal: float | None = None

    def _action(self, eef: Any, target: Any, gripper: float, yaw_error: float = 0.0) -> Any:
        action = np.zeros(7, dtype=np.float64)
        action[:3] = np.clip(GAIN * (target - eef), -1.0, 1.0)
        action[5] = float(np.clip(YAW_GAIN * yaw_error, -1.0, 1.0))
        action[6] = gripper
        return action

    def act(self, observation: Any) -> Any:
        proprio, objects = observation["proprioception"], observation["objects"]
        eef, nut = proprio[self.eef], objects[self.pos]
        hand_yaw = _yaw(proprio[self.eef_quat])
        nut_yaw = _yaw(objects[self.quat])
        handle = nut + HANDLE[self.nut] * np.array([math.cos(nut_yaw), math.sin(nut_yaw), 0.0])
        turning = self.phase in ("approach", "descend")  # the fingers are symmetric: the yaw counts mod pi
        yaw_error = _wrap(nut_yaw + FINGERS - hand_yaw, math.pi) if turning else 0.0
        if self.phase == "approach":
            above = handle + np.array([0.0, 0.0, HOVER])
            if np.linalg.norm((above - eef)[:2]) < 0.01 and abs(above[2] - eef[2]) < 0.02 and abs(yaw_error) < 0.05:
                self.phase = "descend"
            return self._action(eef, above, -1.0, yaw_error)
        if self.phase == "descend":
            self.count += 1
            if np.linalg.norm(handle - eef) < 0.008 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
            return self._action(eef, handle, -1.0, yaw_error)
        if self.phase == "close":
            self.count += 1
            if self.count >= CLOSE_STEPS:
                self.phase, self.count = "lift", 0
            return self._action(eef, eef, 1.0)
        held = eef - nut  # the hand's offset from the nut's centre
        peg = np.array([*PEGS[self.nut], 0.0])
        if self.phase in ("lift", "carry", "lower") and held[2] > MISSED:  # the nut is not in the hand: again
            self.phase, self.count = "approach", 0
            return self._action(eef, eef + np.array([0.0, 0.0, 0.05]), -1.0)
        if self.phase == "lift":
            target = np.array([eef[0], eef[1], CARRY + held[2]])
            if nut[2] > CARRY - 0.03:
                self.phase = "carry"
            return self._action(eef, target, 1.0)
        if self.phase == "carry":
            target = np.array([peg[0] + held[0], peg[1] + held[1], CARRY + held[2]])
            if np.linalg.norm((peg - nut)[:2]) < 0.008:
                self.phase, self.count = "lower", 0
            return self._action(eef, target, 1.0)
        if self.phase == "lower":
            target = np.array([peg[0] + held[0], peg[1] + held[1], DOWN + held[2]])
            self.count += 1
            if nut[2] < DOWN + 0.01 or self.count >= LOWER_STEPS:
                self.phase, self.count = "release", 0
            return self._action(eef, target, 1.0)
        self.count += 1
        if self.count <= RELEASE_STEPS:
            return self._action(eef, eef, -1.0)
        return self._action(eef, np.array([eef[0], eef[1], CARRY + 0.05]), -1.0)  # clear of the nut

    @property
    def done(self) -> bool:
        return self.phase == "release" and self.count > 3 * RELEASE_STEPS


class Sequence:
    def __init__(self, nuts: list[Nut]) -> None:
        self.nuts = nuts

    def act(self, observation: Any) -> Any:
        while len(self.nuts) > 1 and self.nuts[0].done:
            self.nuts.pop(0)
        return self.nuts[0].act(observation)


class Single:
    """``nut-assembly-single``: ``nut_id`` (0 square, 1 round) says which nut this Episode has."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.policy: Nut | None = None

    def act(self, observation: Any) -> Any:
        if self.policy is None:
            nut_id = float(observation["objects"][slice(*self.metadata["object_fields"]["nut_id"])][0])
            self.policy = Nut(self.metadata, "RoundNut" if nut_id > 0.5 else "SquareNut", "nut")
        return self.policy.act(observation)


def make_policy(context: Any) -> Any:
    env, metadata = context.environment_parameters["env"], context.metadata
    if env == "NutAssemblySingle":
        return Single(metadata)
    if env == "NutAssembly":
        return Sequence([Nut(metadata, "SquareNut", "SquareNut"), Nut(metadata, "RoundNut", "RoundNut")])
    nut = "SquareNut" if env == "NutAssemblySquare" else "RoundNut"
    return Nut(metadata, nut, nut)
