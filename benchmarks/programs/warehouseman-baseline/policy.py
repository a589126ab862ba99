"""Baseline Policy for ``codechef/warehous-warehouseman``: serpentine storage, then sliding-tile retrieval.

Storage: the cells in serpentine order (row 0 left to right, row 1 right to left, ...) starting at the entrance;
the first arriving shipment goes to the last cell of that path, the next to the one before, and so on (far to near),
the forklift walking the shortest route over empty cells each time. When every shipment is stored, only the
entrance is free.

Retrieval, in numeric order: the forklift is the blank of a sliding-tile puzzle. To move the wanted shipment one
cell towards the entrance, the forklift first travels to that cell without crossing the wanted shipment (over an
empty cell: one move; into a stored shipment: lift it, step into its cell, put it down behind: 5 characters), then
lifts the wanted shipment, steps into its cell and puts it down where it stood. Once the shipment is next to the
entrance the forklift goes to the entrance, lifts it and delivers it. A grid of at least 2x2 stays connected without
one cell, so the forklift always has a way round: the construction is valid for every size from 6 to 20.
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

    def retrieve_one(self, shipment: int) -> None:
        while True:
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
