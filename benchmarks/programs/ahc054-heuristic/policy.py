"""Heuristic Policy for ``atcoder/ahc054-treants-forest``: hide the flower behind a porch, fence the forest, on turn 1.

The adventurer heads for the flower as soon as it is revealed, and a cell is revealed when the adventurer stands in
its row or column with no tree in between. So on the first turn (when only the entrance is revealed) this Policy:

* walls the flower in: treants on every neighbour of the flower but one (the porch) and on the cell beyond the
  porch, so the flower can only be seen from the porch itself. Of the four possible porches it takes the one with
  the longest walk from the entrance to the flower (one that keeps the flower reachable: the rules reject the whole
  set otherwise);
* fences the rest: treants on a staggered lattice of spacing ``lattice`` (``params.json``; 0: none), each kept
  only if every free cell stays reachable. They cut the adventurer's lines of sight, so more cells stay hidden
  and it walks to more of its private targets, around more obstacles, before it happens onto the porch.

Later turns place nothing. ``params.json`` is what the built-in ``hill-climb`` Agent tunes (``lattice`` is rounded
and kept between 2 and 8, or 0).
"""

import json
from pathlib import Path
from typing import Any

STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


class Forest:
    """The map as flat cells (``row * size + column``) with each cell's neighbours."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.around: list[list[int]] = []
        for row in range(size):
            for column in range(size):
                self.around.append(
                    [
                        (row + dr) * size + column + dc
                        for dr, dc in STEPS
                        if 0 <= row + dr < size and 0 <= column + dc < size
                    ]
                )

    def reach(self, blocked: bytearray, source: int) -> list[int]:
        """Steps from ``source`` through unblocked cells (-1: unreachable)."""
        distance = [-1] * len(self.around)
        distance[source] = 0
        queue = [source]
        for cell in queue:
            for nxt in self.around[cell]:
                if distance[nxt] < 0 and not blocked[nxt]:
                    distance[nxt] = distance[cell] + 1
                    queue.append(nxt)
        return distance


def plan(size: int, trees: set[int], entrance: int, flower: int, lattice: int) -> list[int]:
    """The cells to place on turn 1 (flat indices)."""
    forest = Forest(size)
    best: tuple[int, list[int]] = (-1, [])
    fr, fc = divmod(flower, size)
    for pr, pc in STEPS:
        porch = (fr + pr, fc + pc)
        if not (0 <= porch[0] < size and 0 <= porch[1] < size) or porch[0] * size + porch[1] in trees:
            continue
        cells = [(fr + dr, fc + dc) for dr, dc in STEPS if (dr, dc) != (pr, pc)]
        cells.append((fr + 2 * pr, fc + 2 * pc))
        wall = [r * size + c for r, c in cells if 0 <= r < size and 0 <= c < size]
        wall = [cell for cell in wall if cell not in trees and cell != entrance]
        blocked = bytearray(size * size)
        for cell in (*trees, *wall):
            blocked[cell] = 1
        distance = forest.reach(blocked, flower)[entrance]
        if distance > best[0]:
            best = (distance, wall)
    chosen = list(best[1])
    if lattice < 2:
        return chosen
    blocked = bytearray(size * size)
    for cell in (*trees, *chosen):
        blocked[cell] = 1
    free = size * size - sum(blocked)
    for row in range(1, size):
        for column in range(size):
            cell = row * size + column
            if row % lattice or (column + row // lattice) % lattice or blocked[cell]:
                continue
            if abs(row - fr) + abs(column - fc) <= 2 or cell == entrance:
                continue
            blocked[cell] = 1
            if sum(1 for d in forest.reach(blocked, flower) if d >= 0) == free - 1:
                chosen.append(cell)
                free -= 1
            else:
                blocked[cell] = 0
    return chosen


class Policy:
    def __init__(self, lattice: int) -> None:
        self.lattice = lattice

    def act(self, observation: Any) -> dict[str, list[list[int]]]:
        initial = observation.get("initial")
        if not initial:
            return {"placements": []}
        size = int(initial["size"])
        trees = {int(r) * size + int(c) for r, c in initial["trees"]}
        entrance = int(initial["entrance"][0]) * size + int(initial["entrance"][1])
        flower = int(initial["flower"][0]) * size + int(initial["flower"][1])
        cells = plan(size, trees, entrance, flower, self.lattice)
        return {"placements": [list(divmod(cell, size)) for cell in cells]}


def make_policy(context: Any) -> Policy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    lattice = round(float(params.get("lattice", 3)))
    return Policy(lattice if 2 <= lattice <= 8 else 0)
