"""Heuristic Policy for ``codechef/warehous-warehouseman``: the baseline's storage and sliding, plus carrying.

Storage is the baseline's (serpentine, far to near). Retrieval moves the wanted shipment by the same sliding-tile
steps, but before each step it looks for a cheaper way: once delivered shipments have freed cells, the forklift
can often walk over empty cells to a free neighbour of the wanted shipment, lift it and carry it to the entrance
over empty cells (the cell the shipment leaves counts as free). It takes that route whenever one exists, which
makes the second half of the retrieval far shorter than sliding.
"""

import heapq
from collections import deque
from typing import Any

DELTAS = {"N": (-1, 0), "W": (0, -1), "S": (1, 0), "E": (0, 1)}
OPPOSITE = {"N": "S", "S": "N", "W": "E", "E": "W"}
STORED_STEP_COST = 5


class Planner:
    """The warehouse as the forklift leaves it, and the instructions written so far."""

    def __init__(self, rows: int, columns: int) -> None:
        self.rows, self.columns = rows, columns
        self.grid = [0] * (rows * columns)
        self.where: dict[int, int] = {}
        self.position = 0
        self.out: list[str] = []
        self.around: list[list[tuple[str, int]]] = []  # per cell: (direction, neighbour), computed once
        for cell in range(rows * columns):
            row, column = divmod(cell, columns)
            self.around.append(
                [
                    (name, (row + dr) * columns + column + dc)
                    for name, (dr, dc) in DELTAS.items()
                    if 0 <= row + dr < rows and 0 <= column + dc < columns
                ]
            )
        self.towards = [{name: nxt for name, nxt in found} for found in self.around]
        self.named = [{nxt: name for name, nxt in found} for found in self.around]

    def neighbours(self, cell: int) -> list[tuple[str, int]]:
        return self.around[cell]

    def direction(self, source: int, target: int) -> str:
        return self.named[source][target]

    def move(self, name: str) -> None:
        self.out.append(name)
        self.position = self.towards[self.position][name]

    def lift(self, name: str) -> int:
        cell = self.towards[self.position][name]
        shipment, self.grid[cell] = self.grid[cell], 0
        self.out.append("L" + name)
        return shipment

    def unload(self, name: str, shipment: int) -> None:
        cell = self.towards[self.position][name]
        self.grid[cell] = shipment
        self.where[shipment] = cell
        self.out.append("U" + name)

    def walk(self, target: int) -> None:
        """Walk over empty cells to ``target`` by a shortest route."""
        previous = {self.position: -1}
        queue = deque([self.position])
        while queue:
            cell = queue.popleft()
            if cell == target:
                break
            for _, nxt in self.neighbours(cell):
                if nxt not in previous and not self.grid[nxt]:
                    previous[nxt] = cell
                    queue.append(nxt)
        path: list[int] = []
        cell = target
        while cell != self.position:
            path.append(cell)
            cell = previous[cell]
        for cell in reversed(path):
            self.move(self.direction(self.position, cell))

    def travel(self, target: int, avoid: int) -> None:
        """Take the forklift (empty hands) to ``target`` without entering ``avoid``, swapping past stored shipments.

        The cheapest route (a move costs 1, a swap 5) by A* search, the Manhattan distance as the estimate."""
        target_row, target_column = divmod(target, self.columns)
        grid, around, columns = self.grid, self.around, self.columns
        unseen = len(grid) * STORED_STEP_COST + 1
        best = [unseen] * len(grid)
        best[self.position] = 0
        previous = [-1] * len(grid)
        heap = [(0, 0, self.position)]
        while heap:
            _, cost, cell = heapq.heappop(heap)
            if cell == target:
                break
            if cost > best[cell]:
                continue
            for _, nxt in around[cell]:
                total = cost + (STORED_STEP_COST if grid[nxt] else 1)
                if total < best[nxt] and nxt != avoid:
                    best[nxt] = total
                    previous[nxt] = cell
                    estimate = total + abs(nxt // columns - target_row) + abs(nxt % columns - target_column)
                    heapq.heappush(heap, (estimate, total, nxt))
        path: list[int] = []
        cell = target
        while cell != self.position:
            path.append(cell)
            cell = previous[cell]
        for cell in reversed(path):
            self.step_into(cell)

    def step_into(self, cell: int) -> None:
        """Move to the adjacent ``cell``; a shipment stored there goes to the cell the forklift leaves."""
        name = self.direction(self.position, cell)
        if not self.grid[cell]:
            self.move(name)
            return
        shipment = self.lift(name)
        self.move(name)
        self.unload(OPPOSITE[name], shipment)

    def store(self, arrivals: list[int]) -> None:
        path: list[int] = []
        for row in range(self.rows):
            columns = range(self.columns) if row % 2 == 0 else range(self.columns - 1, -1, -1)
            path.extend(row * self.columns + c for c in columns)
        last = len(path) - 1
        for j, shipment in enumerate(arrivals):
            self.out.append("P")
            slot = path[last - j]
            self.walk(path[last - j - 1])
            self.unload(self.direction(self.position, slot), shipment)
            self.walk(0)

    def empty_distances(self, source: int, extra: int = -1) -> dict[int, int]:
        """Steps from ``source`` over empty cells (and ``extra``) to every cell reachable that way."""
        distance = {source: 0}
        queue = deque([source])
        while queue:
            cell = queue.popleft()
            for _, nxt in self.neighbours(cell):
                if nxt not in distance and (not self.grid[nxt] or nxt == extra):
                    distance[nxt] = distance[cell] + 1
                    queue.append(nxt)
        return distance

    def carry(self, shipment: int) -> bool:
        """Walk to a free neighbour of ``shipment``, lift it, carry it to the entrance and deliver it, if possible."""
        cell = self.where[shipment]
        if self.grid[0]:
            return False
        from_forklift = self.empty_distances(self.position)
        to_entrance = self.empty_distances(0, extra=cell)
        options = [
            (from_forklift[n] + to_entrance[n], n)
            for _, n in self.neighbours(cell)
            if n in from_forklift and n in to_entrance and not self.grid[n]
        ]
        if not options:
            return False
        _, stand = min(options)
        self.walk(stand)
        self.lift(self.direction(stand, cell))
        del self.where[shipment]
        self.grid[cell] = 0
        self.walk(0)
        self.out.append("D")
        return True

    def retrieve_one(self, shipment: int) -> None:
        while True:
            if self.carry(shipment):
                return
            cell = self.where[shipment]
            if cell in (1, self.columns):  # next to the entrance
                self.travel(0, avoid=cell)
                self.lift(self.direction(0, cell))
                del self.where[shipment]
                self.out.append("D")
                return
            row, column = divmod(cell, self.columns)
            towards = [cell - self.columns] if row else []
            if column:
                towards.append(cell - 1)
            nxt = min(towards, key=lambda c: (self.grid[c] != 0, c))
            self.travel(nxt, avoid=cell)
            name = self.direction(nxt, cell)
            lifted = self.lift(name)
            self.move(name)
            self.unload(OPPOSITE[name], lifted)


def solve(rows: int, columns: int, arrivals: list[int]) -> str:
    planner = Planner(rows, columns)
    planner.store(arrivals)
    for shipment in range(1, len(arrivals) + 1):
        planner.retrieve_one(shipment)
    return "".join(planner.out)


class Policy:
    def act(self, observation: Any) -> str:
        return solve(int(observation["rows"]), int(observation["columns"]), [int(a) for a in observation["arrivals"]])


def make_policy(context: Any) -> Policy:
    return Policy()
