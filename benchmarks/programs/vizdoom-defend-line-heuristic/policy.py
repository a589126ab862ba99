"""Heuristic Policy for ``vizdoom/defend-line``: an aiming turret that shoots the biggest monster in view.

Perception: the monsters (pink demons, imps with red heads) are the only red things in the room: pixels of the
band above the gun (rows 60-160) whose red channel exceeds green by 45. Their columns are grouped into blobs (runs of
columns with red pixels, gaps of up to 3 columns joined); the blob with the most pixels is the nearest monster.
Control: ATTACK when that blob covers the centre column (160, with 2 pixels to spare), else turn towards its middle
(TURN_LEFT / TURN_RIGHT); with no monster in view, turn back towards the heading the Episode started with (the
monsters come from across the room), counting the turns taken. Actions are found by name in
``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160
SPARE = 2
GAP = 3


def _blobs(columns: Any, counts: Any) -> list[tuple[int, int, int]]:
    """Runs of red columns as (first, last, pixels), gaps of up to GAP columns joined."""
    blobs: list[tuple[int, int, int]] = []
    for column in columns.tolist():
        if blobs and column - blobs[-1][1] <= GAP + 1:
            first, _, pixels = blobs[-1]
            blobs[-1] = (first, column, pixels + int(counts[column]))
        else:
            blobs.append((column, column, int(counts[column])))
    return blobs


class Turret:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.left = actions.index("turn_left")
        self.right = actions.index("turn_right")
        self.heading = 0  # right turns minus left turns since the start

    def _turn(self, right: bool) -> int:
        self.heading += 1 if right else -1
        return self.right if right else self.left

    def act(self, observation: Any) -> int:
        band = np.asarray(observation["screen"], dtype=np.int16)[60:160]
        red = (band[..., 0] - band[..., 1]) >= 45
        counts = red.sum(axis=0)
        columns = np.flatnonzero(counts)
        if columns.size == 0:
            if self.heading == 0:
                return 0
            return self._turn(right=self.heading < 0)
        first, last, _ = max(_blobs(columns, counts), key=lambda blob: blob[2])
        if first - SPARE <= CENTRE <= last + SPARE:
            return self.attack
        return self._turn(right=(first + last) / 2 > CENTRE)


def make_policy(context: Any) -> Any:
    return Turret(list(context.metadata["actions"]))
