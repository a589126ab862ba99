"""Heuristic Policy of the pick tasks (``robosuite/lift``, ``stack`` and the ``pick-place*`` tasks): move the open
gripper above the object, descend onto it, close the gripper, lift; on ``stack``, then carry the cube above the
other one, lower it and let go; on pick-and-place, carry it above its compartment of the goal bin and let go.
``pick-place-single`` reads which object it got from ``obj_id``; ``pick-place`` (all four objects) places them one
after another (can, bread, milk, cereal), coming back to any that is not in its compartment.

The positions come from the observation through ``context.metadata``: the end effector's position is the
``robot0_eef_pos`` field of ``proprioception``, the object's the ``<object>_pos`` field of ``objects`` (which one:
:data:`TARGETS`, by ``environment_parameters["env"]``). The OSC_POSE controller takes position deltas (scaled to at
most 5 cm per step), so a proportional step ``GAIN * error``, clipped to [-1, 1], moves the hand towards a target;
the rotation deltas stay 0 (the gripper keeps pointing down).
"""

from typing import Any

import numpy as np

GAIN = 12.0
HOVER = 0.08  # metres above the object before descending
CLOSE_STEPS = 12  # steps spent closing the gripper before lifting
DESCEND_STEPS = 40  # close anyway after this many steps of descending (the fingers met the object or the table)
LIFT = 0.25  # metres to lift above the grasp
LOST = 0.08  # the grasp is lost when the object is this far from the hand while carrying (pick-place only)
BIN = {"Milk": (0.0025, 0.1575), "Bread": (0.1975, 0.1575), "Cereal": (0.0025, 0.4025), "Can": (0.1975, 0.4025)}
"""The centre (x, y) of each object's compartment of the goal bin (upstream ``target_bin_placements``, fixed)."""
OBJECT_IDS = ("Milk", "Bread", "Cereal", "Can")  # upstream's obj_id order
ORDER = ("Can", "Bread", "Milk", "Cereal")  # pick-place: the easiest grasps first
CLEAR = 1.05  # pick-place-single and pick-place carry the hand at least this high (the bins' walls)
TALL = 0.12  # pick-place-single and pick-place hover this high above the object: the milk carton is tall
IN_BIN = 0.06  # an object whose (x, y) is this close to its compartment's centre and low is in its bin
TARGETS: dict[str, tuple[str, Any, float]] = {
    # env: (field of the object to pick, where to put it: a field, a fixed (x, y, z) or None, put-down height)
    "Lift": ("cube_pos", None, 0.0),
    "Stack": ("cubeA_pos", "cubeB_pos", 0.05),  # cube A's centre 5 cm above cube B's
    **{f"PickPlace{o}": (f"{o}_pos", (*BIN[o], 0.8), 0.1) for o in BIN},  # 10 cm above the bin's floor
}


class Pick:
    """One object: approach, descend, close, lift, then (with a place) carry, lower and let go."""

    def __init__(
        self,
        eef: slice,
        target: slice,
        place: Any,
        put_height: float,
        *,
        regrasp: bool = False,
        clear: float = 0.0,
        hover: float = HOVER,
    ) -> None:
        self.eef, self.target, self.place, self.put_height = eef, target, place, put_height
        self.regrasp = regrasp  # go back to the approach when the object drops out of the hand while carrying
        self.clear = clear  # carry the hand at least this high (clear of the bins' walls)
        self.hover = hover  # metres above the object's centre before descending
        self.phase = "approach"
        self.count = 0
        self.grasp_height = 0.0

    def _move(self, eef: Any, target: Any, gripper: float) -> Any:
        action = np.zeros(7, dtype=np.float64)
        action[:3] = np.clip(GAIN * (target - eef), -1.0, 1.0)
        action[6] = gripper
        return action

    def act(self, observation: Any) -> Any:
        eef = observation["proprioception"][self.eef]
        obj = observation["objects"][self.target]
        if self.regrasp and self.phase in ("lift", "carry", "lower") and np.linalg.norm(obj - eef) > LOST:
            self.phase, self.count = "approach", 0
        if self.phase == "approach":
            above = obj + np.array([0.0, 0.0, self.hover])
            if np.linalg.norm((above - eef)[:2]) < 0.01 and abs(above[2] - eef[2]) < 0.02:
                self.phase = "descend"
            return self._move(eef, above, -1.0)
        if self.phase == "descend":
            self.count += 1
            if np.linalg.norm(obj - eef) < 0.01 or self.count >= DESCEND_STEPS:
                self.phase, self.count = "close", 0
            return self._move(eef, obj, -1.0)
        if self.phase == "close":
            self.count += 1
            if self.count >= CLOSE_STEPS:
                self.phase, self.count = "lift", 0
                self.grasp_height = float(eef[2])
            return self._move(eef, eef, 1.0)
        if self.phase == "lift":
            target = np.array([eef[0], eef[1], max(self.grasp_height + LIFT, self.clear)])
            if self.place is not None and eef[2] > max(self.grasp_height + LIFT - 0.15, self.clear - 0.02):
                self.phase = "carry"
            return self._move(eef, target, 1.0)
        base = observation["objects"][self.place] if isinstance(self.place, slice) else np.array(self.place)
        held = eef - obj  # keep the grasp offset: put the object, not the hand, on the base
        if self.phase == "carry":
            height = max(eef[2], base[2] + self.put_height + 0.05, self.clear)
            above = np.array([base[0] + held[0], base[1] + held[1], height])
            if np.linalg.norm((above - eef)[:2]) < 0.01:
                self.phase = "lower"
            return self._move(eef, above, 1.0)
        if self.phase == "lower":
            onto = base + np.array([0.0, 0.0, self.put_height]) + held
            if np.linalg.norm(onto - eef) < 0.01:
                self.phase = "release"
            return self._move(eef, onto, 1.0)
        self.count += 1
        if self.count == CLOSE_STEPS:
            self.grasp_height = float(eef[2])
        if self.count > CLOSE_STEPS:  # let go, then rise 10 cm and stay there
            return self._move(eef, np.array([eef[0], eef[1], self.grasp_height + 0.1]), -1.0)
        return self._move(eef, eef, -1.0)

    @property
    def done(self) -> bool:
        """Let go and risen (the next object may start)."""
        return self.phase == "release" and self.count > 2 * CLOSE_STEPS


class PickSingle:
    """``pick-place-single``: the object is chosen per Episode; ``obj_id`` says which, hence its compartment."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.pick: Pick | None = None

    def act(self, observation: Any) -> Any:
        if self.pick is None:
            fields = self.metadata["object_fields"]
            chosen = float(observation["objects"][slice(*fields["obj_id"])][0])
            name = OBJECT_IDS[min(max(round(chosen), 0), len(OBJECT_IDS) - 1)]
            eef = slice(*self.metadata["proprioception_fields"]["robot0_eef_pos"])
            self.pick = Pick(eef, slice(*fields["object_pos"]), (*BIN[name], 0.8), 0.1, clear=CLEAR, hover=TALL)
        return self.pick.act(observation)


class PickAll:
    """``pick-place``: the four objects one after another; an object not in its compartment is picked again."""

    def __init__(self, metadata: Any) -> None:
        self.eef = slice(*metadata["proprioception_fields"]["robot0_eef_pos"])
        self.objects = {o: slice(*metadata["object_fields"][f"{o}_pos"]) for o in ORDER}
        self.current: str | None = None
        self.pick: Pick | None = None

    def _placed(self, observation: Any, name: str) -> bool:
        position = observation["objects"][self.objects[name]]
        return bool(np.linalg.norm(position[:2] - np.array(BIN[name])) < IN_BIN and position[2] < 0.9)

    def act(self, observation: Any) -> Any:
        if self.pick is None or self.pick.done:
            left = [o for o in ORDER if not self._placed(observation, o)]
            if self.current in left and self.pick is not None and len(left) > 1:
                left.remove(self.current)  # it fell outside its compartment: try the others first
            if not left:
                return np.zeros(7, dtype=np.float64)
            self.current = left[0]
            place = (*BIN[self.current], 0.8)
            self.pick = Pick(self.eef, self.objects[self.current], place, 0.1, regrasp=True, clear=CLEAR, hover=TALL)
        return self.pick.act(observation)


def make_policy(context: Any) -> Any:
    env, metadata = context.environment_parameters["env"], context.metadata
    if env == "PickPlaceSingle":
        return PickSingle(metadata)
    if env == "PickPlace":
        return PickAll(metadata)
    target, place, put_height = TARGETS[env]
    fields = metadata["object_fields"]
    eef = slice(*metadata["proprioception_fields"]["robot0_eef_pos"])
    return Pick(eef, slice(*fields[target]), slice(*fields[place]) if isinstance(place, str) else place, put_height)
