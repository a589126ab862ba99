"""Heuristic Policy for ``vizdoom/deadly-corridor``: run for the vest, shooting the guards that cross the sights.

The reward pays for every unit of progress towards the vest at the corridor's end, and dying costs 100 whatever
was done before, so running forward beats standing still even though the guards (doom skill 5) usually kill the
player on the way. Perception: the guards are the only things in the corridor with blue (blue above red by 30) or
bright red (red at least 120 and above green by 60) pixels; in rows 60-150 (above the gun) their columns are
grouped into blobs (gaps of up to 3 columns joined). Control: ATTACK when a blob of at least BIG pixels (a guard
near enough to hit) covers the centre column (160, AIM pixels to spare), else MOVE_FORWARD. Actions are found by
name in ``context.metadata["actions"]``.
"""

from typing import Any

import numpy as np

CENTRE = 160
AIM = 6
GAP = 3
BIG = 20


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


class Runner:
    def __init__(self, actions: list[str]) -> None:
        self.attack = actions.index("attack")
        self.forward = actions.index("move_forward")

    def act(self, observation: Any) -> int:
        view = np.asarray(observation["screen"], dtype=np.int16)[60:150]
        r, g, b = view[..., 0], view[..., 1], view[..., 2]
        for first, last, pixels in _blobs(((b - r) > 30) | ((r >= 120) & (r - g > 60))):
            if pixels >= BIG and first - AIM <= CENTRE <= last + AIM:
                return self.attack
        return self.forward


def make_policy(context: Any) -> Any:
    return Runner(list(context.metadata["actions"]))
