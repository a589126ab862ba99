"""Heuristic Policy for ``vizdoom/predict-position``: hold still, time the monster's pass, fire where it will be.

The monster patrols left and right along the far side of the room, so it crosses straight ahead (the centre
column, 160) every few seconds; the Policy never turns. Perception: holding still, the monster is the only thing
that moves, so the columns where two successive screens differ (rows 100-150, a channel sum changed by more than
40) are where it was and is; their middle is its column. It walks at a constant depth, so its column moves linearly
in time: its speed in pixels a tic comes from the first and last column seen over the last WINDOW tics (at least
MIN_SPAN apart). Its gait covers STRIDE map units a tic, so the speed also tells its depth (a 90-degree field of
view: 160 pixels per unit of depth), hence the rocket's flight at 20 units a tic (from 30 units ahead of the
player to the monster's near edge, 42 units short of its middle), after the launcher's DELAY. Control: fire
(ATTACK) when the monster, moving towards the centre, will reach it within the rocket's time or a little less
(LATE), else wait (NOOP). There is one rocket. Actions are found by name in ``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160.0
STRIDE = 20.0 / 3.0  # map units a tic: the monster jumps 20 units every third tic
DELAY = 8.0  # tics from ATTACK to the rocket leaving the launcher
ROCKET = 20.0  # map units a tic
LATE = 4.0
WINDOW = 12
MIN_SPAN = 6


class Gunner:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.previous: Any = None
        self.t = 0
        self.seen: list[tuple[int, float]] = []
        self.fired = False

    def _look(self, observation: Any) -> None:
        band = np.asarray(observation["screen"], dtype=np.int16)[100:150]
        if self.previous is not None:
            changed = np.abs(band - self.previous).sum(axis=-1) > 40
            columns = np.flatnonzero(changed.any(axis=0))
            if columns.size:
                self.seen.append((self.t, (float(columns.min()) + float(columns.max())) / 2 - CENTRE))
        self.previous = band
        self.seen = [(t, b) for t, b in self.seen if t >= self.t - WINDOW]

    def act(self, observation: Any) -> int:
        self.t += 1
        self._look(observation)
        if self.fired or len(self.seen) < 2:
            return 0
        (t0, b0), (t1, b1) = self.seen[0], self.seen[-1]
        if t1 - t0 < MIN_SPAN or b1 == b0:
            return 0
        speed = (b1 - b0) / (t1 - t0)  # pixels a tic
        depth = min(max(CENTRE * STRIDE / abs(speed), 400.0), 900.0)
        lead = DELAY + (depth - 30.0 - 42.0) / ROCKET
        now = b1 + speed * (self.t - t1)
        arrival = -now / speed  # tics until it is straight ahead; negative once it has passed
        if lead - LATE <= arrival <= lead:
            self.fired = True
            return self.attack
        return 0


def make_policy(context: Any) -> Any:
    return Gunner(list(context.metadata["actions"]))
