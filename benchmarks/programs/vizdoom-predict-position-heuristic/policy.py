"""Heuristic Policy for ``vizdoom/predict-position``: watch the monster, turn to where it will be, fire the rocket.

Perception: while the Policy holds still, the monster is the only thing that moves, so the columns where two
successive screens differ (rows 100-150, a channel sum changed by more than 40) are where it was and is; their
middle is its column, turned into a bearing (a 90-degree field of view). Its sprite jumps every few tics, so its
angular speed comes from the first and last bearing seen over an observation phase of at least OBSERVE tics.
Control: a held TURN turns SLOW_TURN degrees a tic for its first SLOW_TICS tics, then FAST_TURN (Doom's slow
start), and the rocket needs about LEAD tics to arrive. The Policy finds the fewest tics n of turning (left or
right) or of waiting after which the monster's bearing, moved on by the rocket's flight, is straight ahead. If n is
at most FINE it takes them and fires (ATTACK); else it turns n tics and watches again (closed loop: the last
correction is short and measured fresh). After a miss it watches again and retries once the rocket is gone.
Actions are found by name in ``context.metadata["actions"]``.
"""

import math
from typing import Any

import numpy as np

CENTRE = 160.0
SLOW_TURN, FAST_TURN, SLOW_TICS = 1.758, 3.516, 5  # degrees a tic (Doom's 320 and 640 of 65536 a tic)
LEAD = 15.0
OBSERVE = 9
FINE = 3
SETTLE = 20
MAX_TICS = 60


def _angle(column: float) -> float:
    """The bearing of a screen column, in degrees right of the centre."""
    return math.degrees(math.atan((column - CENTRE) / CENTRE))


def _turned(n: int) -> float:
    return SLOW_TURN * min(n, SLOW_TICS) + FAST_TURN * max(n - SLOW_TICS, 0)


class Gunner:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.left = actions.index("turn_left")
        self.right = actions.index("turn_right")
        self.previous: Any = None
        self.t = 0
        self.seen: list[tuple[int, float]] = []
        self.plan: list[int] = []
        self.wait = 0

    def _look(self, observation: Any) -> None:
        band = np.asarray(observation["screen"], dtype=np.int16)[100:150]
        if self.previous is not None:
            changed = np.abs(band - self.previous).sum(axis=-1) > 40
            columns = np.flatnonzero(changed.any(axis=0))
            if columns.size:
                self.seen.append((self.t, _angle((float(columns.min()) + float(columns.max())) / 2)))
        self.previous = band

    def _solve(self) -> list[int]:
        (t0, a0), (t1, a1) = self.seen[0], self.seen[-1]
        speed = (a1 - a0) / (t1 - t0)
        start = a1 + speed * (self.t - t1 + LEAD)  # its bearing when a rocket fired now would arrive
        for n in range(MAX_TICS):
            for action, direction in ((0, 0.0), (self.right, -1.0), (self.left, 1.0)):
                before = start + speed * (n - 1) + direction * _turned(n - 1) if n else start
                after = start + speed * n + direction * _turned(n)
                if abs(after) <= 0.5 or (n and before * after < 0):
                    return [action] * n + [self.attack] if n <= FINE or action == 0 else [action] * n
        return [self.attack]

    def act(self, observation: Any) -> int:
        self.t += 1
        if self.plan:
            action = self.plan.pop(0)
            if not self.plan:
                self.seen, self.previous = [], None
                self.wait = SETTLE if action == self.attack else 0
            return action
        if self.wait > 0:
            self.wait -= 1
            return 0
        self._look(observation)
        if len(self.seen) >= 2 and self.seen[-1][0] - self.seen[0][0] >= OBSERVE - 3:
            self.plan = self._solve()
            return self.act(observation)
        return 0


def make_policy(context: Any) -> Any:
    return Gunner(list(context.metadata["actions"]))
