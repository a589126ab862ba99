"""Heuristic Policy for ``vizdoom/deathmatch``: keep moving, turn when blocked or hurt, shoot what crosses the sights.

The return counts every monster that dies, also those the monsters kill among themselves, so staying alive and on
the move (the monsters' shots then hit each other) matters as much as aiming with the starting pistol. Perception:
the monsters are the only tall grey (red, green and blue within 12 of each other, at least 44) or green (green above
red and blue by 8) things in rows 20-150 (above the gun); a column with at least TALL such pixels is a monster's, and
such columns are grouped into blobs (gaps of up to GAP columns joined). The game variables ``health`` and
``selected_weapon_ammo`` are found by name in ``context.metadata["game_variables"]``. The player is blocked when the
middle of the screen (rows 60-180, columns 80-240) is all but unchanged after a step (mean absolute difference
under 2). Control: ATTACK when a blob of at least BIG pixels covers the centre column (160, 2 pixels to spare) and
no shot was fired in the last COOLDOWN steps (the pistol's first shot after a pause is the accurate one); else
MOVE_FORWARD, turning (the continuous turn delta, degrees to the right) 30 degrees a step when blocked, HURT degrees
a step for ALARM steps after the health dropped (towards whoever shoots, or away), else straight on. All the while
it strafes (the continuous move delta) SIDE units a step, changing sides every SWAY steps, which dodges part of the
fire. Actions are found by name in ``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160
TOP, BOTTOM = 20, 150
TALL = 14
GAP = 3
BIG = 60
COOLDOWN = 12
HURT = 20.0
ALARM = 30
SIDE = 50.0
SWAY = 35


def _blobs(mask: Any) -> list[tuple[int, int, int]]:
    """Runs of columns with at least TALL marked pixels as (first, last, pixels), gaps of up to GAP columns joined."""
    counts = mask.sum(axis=0)
    blobs: list[tuple[int, int, int]] = []
    for column in np.flatnonzero(counts >= TALL).tolist():
        if blobs and column - blobs[-1][1] <= GAP + 1:
            first, _, pixels = blobs[-1]
            blobs[-1] = (first, column, pixels + int(counts[column]))
        else:
            blobs.append((column, column, int(counts[column])))
    return blobs


class Walker:
    def __init__(self, actions: list[str], variables: list[str]) -> None:
        self.attack = actions.index("attack")
        self.forward = actions.index("move_forward")
        self.health_at = variables.index("health")
        self.ammo_at = variables.index("selected_weapon_ammo")
        self.health: float | None = None
        self.ammo: float | None = None
        self.previous: Any = None
        self.cooldown = 0
        self.alarm = 0
        self.t = 0

    def act(self, observation: Any) -> Any:
        self.t += 1
        side = SIDE if (self.t // SWAY) % 2 else -SIDE
        variables = np.asarray(observation["gamevariables"], dtype=np.float64)
        health, ammo = float(variables[self.health_at]), float(variables[self.ammo_at])
        self.cooldown = COOLDOWN if self.ammo is not None and ammo < self.ammo else max(0, self.cooldown - 1)
        self.alarm = ALARM if self.health is not None and health < self.health else max(0, self.alarm - 1)
        self.health, self.ammo = health, ammo
        screen = np.asarray(observation["screen"], dtype=np.int16)
        middle = screen[60:180, 80:240]
        blocked = self.previous is not None and float(np.abs(middle - self.previous).mean()) < 2.0
        self.previous = middle
        view = screen[TOP:BOTTOM]
        r, g, b = view[..., 0], view[..., 1], view[..., 2]
        grey = (np.abs(r - g) < 12) & (np.abs(g - b) < 12) & (r >= 44)
        green = (g > r + 8) & (g > b + 8)
        if not self.cooldown:
            for first, last, pixels in _blobs(grey | green):
                if pixels >= BIG and first - 2 <= CENTRE <= last + 2:
                    return {"binary": self.attack, "continuous": [0.0, 0.0, side]}
        turn = 30.0 if blocked else HURT if self.alarm else 0.0
        return {"binary": self.forward, "continuous": [0.0, turn, side]}


def make_policy(context: Any) -> Any:
    return Walker(list(context.metadata["actions"]), list(context.metadata["game_variables"]))
