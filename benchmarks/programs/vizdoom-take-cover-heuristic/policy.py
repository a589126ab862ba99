"""Heuristic Policy for ``vizdoom/take-cover``: sidestep the fireball that is coming at the player.

Perception: fireballs are the only bright yellow-white things in the room: pixels of the upper screen (rows 0-200,
above the floor's near edge) with red at least 200 and green at least 140. Their columns are grouped into blobs
(gaps of up to 3 columns joined); a blob's pixel count grows as the fireball comes closer. A fireball threatens
when its blob reaches within MARGIN columns of the centre (160), plus a tenth of its pixel count. Control: with a
threat, strafe away from the biggest threatening blob (MOVE_LEFT when it is right of the centre, MOVE_RIGHT
otherwise); when that strafe left the top of the screen unchanged the player is against a side wall, so it
strafes the other way. Without a threat it stands still (NOOP). Actions are found by name in
``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160
GAP = 3
MARGIN = 30


def _blobs(mask: Any) -> list[tuple[int, int, int]]:
    """Runs of marked columns as (first, last, pixels), gaps of up to GAP columns joined."""
    counts = mask.sum(axis=0)
    blobs: list[tuple[int, int, int]] = []
    for column in np.flatnonzero(counts).tolist():
        if blobs and column - blobs[-1][1] <= GAP + 1:
            first, _, pixels = blobs[-1]
            blobs[-1] = (first, column, pixels + int(counts[column]))
        else:
            blobs.append((column, column, int(counts[column])))
    return blobs


class Dodger:
    def __init__(self, actions: list[str]) -> None:
        self.left = actions.index("move_left")
        self.right = actions.index("move_right")
        self.previous: Any = None
        self.last = 0

    def _move(self, right: bool) -> int:
        self.last = self.right if right else self.left
        return self.last

    def act(self, observation: Any) -> int:
        screen = np.asarray(observation["screen"], dtype=np.int16)
        view = screen[:200]
        stuck = self.last != 0 and self.previous is not None and np.array_equal(view[:100], self.previous[:100])
        self.previous = view
        fire = (view[..., 0] >= 200) & (view[..., 1] >= 140)
        threats = [b for b in _blobs(fire) if b[0] - MARGIN - b[2] // 10 <= CENTRE <= b[1] + MARGIN + b[2] // 10]
        if threats:
            first, last, _ = max(threats, key=lambda b: b[2])
            right = (first + last) / 2 < CENTRE
            if stuck and self.last == (self.right if right else self.left):
                right = not right
            return self._move(right)
        self.last = 0
        return 0


def make_policy(context: Any) -> Any:
    return Dodger(list(context.metadata["actions"]))
