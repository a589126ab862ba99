"""Heuristic Policy for ``vizdoom/basic-audio``: the monster is invisible, so sweep the far wall with single shots.

The monster stands still somewhere along the far wall, as in ``basic``, but cannot be seen; its sound would say
where, but the ``audio`` buffer was all zeros on every Episode measured here, so this Policy does not read it. A hit
or two kills; a miss costs 5. Perception: how far the player has strafed, measured on the far wall's bricks (rows
98-135, each screen scaled to zero mean and unit spread because the muzzle flash lights the room; columns 90-230
without the middle, where the bullet puffs land): each screen is matched against a reference screen over a range
of horizontal shifts (the best mean absolute difference wins), and the reference is renewed after every 30 pixels.
Control: strafe left until the wall has moved START pixels (about as far as the room allows), then visit aim
points every SPACING pixels to the right down to END (strafing towards each, NOOP to coast the last pixels) and
fire once on each (ATTACK until the ``ammo2`` game variable drops); a point the player cannot reach (a strafe left
the wall where it was for STALL steps: the player stands against a side wall) counts as reached. When the sweep
ends without a kill it sweeps back, shifted by half a spacing. Actions are found by name in
``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

START = 76.0
END = -76.0
SPACING = 10.0
TOLERANCE = 3.0
COAST = 4.0
REKEY = 30.0
SEARCH = 8
STALL = 3
SIDES = np.r_[90:145, 175:230]  # the columns matched: the bullet puffs land between them


class Sweeper:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.left = actions.index("move_left")
        self.right = actions.index("move_right")
        self.reference: Any = None
        self.key_offset = 0.0
        self.shift = 0.0  # of the current screen against the reference
        self.points = list(np.arange(START, END, -SPACING)) + list(np.arange(END + SPACING / 2, START, SPACING))
        self.ammo: float | None = None
        self.firing = False
        self.last = 0.0
        self.stalled = 0
        self.action = 0

    def _measure(self, screen: Any) -> float:
        """The wall's shift since the start, in pixels (positive: the scene moved right, the player left)."""
        band = np.asarray(screen, dtype=np.float32)[98:135].mean(axis=-1)
        band = (band - band.mean()) / (band.std() + 1e-6)  # the muzzle flash lights the whole room
        if self.reference is None:
            self.reference = band
            return self.key_offset
        centre = round(self.shift)
        best, best_error = centre, float("inf")
        for s in range(centre - SEARCH, centre + SEARCH + 1):
            if abs(s) > 80:
                continue
            error = float(np.abs(band[:, SIDES] - self.reference[:, SIDES - s]).mean())
            if error < best_error:
                best, best_error = s, error
        self.shift = float(best)
        offset = self.key_offset + self.shift
        if abs(self.shift) >= REKEY:
            self.reference, self.key_offset, self.shift = band, offset, 0.0
        return offset

    def act(self, observation: Any) -> int:
        self.action = self._choose(observation)
        return self.action

    def _choose(self, observation: Any) -> int:
        offset = self._measure(observation["screen"])
        variables = observation.get("gamevariables")
        ammo = float(np.asarray(variables)[0]) if variables is not None and len(variables) else None
        if self.firing and ammo is not None and self.ammo is not None and ammo < self.ammo:
            self.firing = False
            self.points.pop(0)
        self.ammo = ammo
        if not self.points:
            return 0
        error = self.points[0] - offset  # > 0: the scene must move right, so the player strafes left
        strafed = self.action in (self.left, self.right)
        self.stalled = self.stalled + 1 if strafed and offset == self.last else 0
        self.last = offset
        if abs(error) <= TOLERANCE or self.stalled >= STALL:
            self.firing, self.stalled = True, 0
            return self.attack
        if abs(error) <= COAST:
            return 0
        return self.left if error > 0 else self.right


def make_policy(context: Any) -> Any:
    return Sweeper(list(context.metadata["actions"]))
