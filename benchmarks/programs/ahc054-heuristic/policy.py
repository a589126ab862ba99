"""Heuristic Policy for ``atcoder/ahc054-treants-forest``: hide the flower behind a one-cell porch, on turn 1.

The adventurer heads for the flower as soon as it is revealed, and a cell is revealed when the adventurer stands in
its row or column with no tree in between. So on the first turn (when only the entrance is revealed) this Policy
walls the flower in: treants on every neighbour of the flower but one (the porch) and on the cell beyond the
porch, so the flower can only be seen from the porch itself. Of the four possible porches it picks the one that
keeps the flower reachable from the entrance (the rules reject the whole set otherwise) with the longest walk from
the entrance to the flower. The adventurer then wanders between its private targets until it happens to step on
the porch. Later turns place nothing.
"""

from collections import deque
from typing import Any

STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def distances(size: int, trees: set[tuple[int, int]], source: tuple[int, int]) -> dict[tuple[int, int], int]:
    found = {source: 0}
    queue = deque([source])
    while queue:
        row, column = queue.popleft()
        for dr, dc in STEPS:
            cell = (row + dr, column + dc)
            if cell not in found and cell not in trees and 0 <= cell[0] < size and 0 <= cell[1] < size:
                found[cell] = found[(row, column)] + 1
                queue.append(cell)
    return found


def porch_plan(
    size: int, trees: set[tuple[int, int]], entrance: tuple[int, int], flower: tuple[int, int]
) -> list[tuple[int, int]]:
    """The treants that leave the flower visible from one porch cell only, or [] if no porch works."""
    best: tuple[int, list[tuple[int, int]]] = (-1, [])
    fr, fc = flower
    for pr, pc in STEPS:
        porch = (fr + pr, fc + pc)
        if not (0 <= porch[0] < size and 0 <= porch[1] < size) or porch in trees or porch == entrance:
            continue
        wall = [(fr + dr, fc + dc) for dr, dc in STEPS if (dr, dc) != (pr, pc)]
        wall.append((fr + 2 * pr, fc + 2 * pc))
        wall = [
            cell
            for cell in wall
            if 0 <= cell[0] < size and 0 <= cell[1] < size and cell not in trees and cell != entrance
        ]
        reach = distances(size, trees | set(wall), flower)
        if entrance in reach and reach[entrance] > best[0]:
            best = (reach[entrance], wall)
    return best[1]


class Policy:
    def act(self, observation: Any) -> dict[str, list[list[int]]]:
        initial = observation.get("initial")
        if not initial:
            return {"placements": []}
        size = int(initial["size"])
        trees = {(int(r), int(c)) for r, c in initial["trees"]}
        entrance = (int(initial["entrance"][0]), int(initial["entrance"][1]))
        flower = (int(initial["flower"][0]), int(initial["flower"][1]))
        return {"placements": [list(cell) for cell in porch_plan(size, trees, entrance, flower)]}


def make_policy(context: Any) -> Policy:
    return Policy()
