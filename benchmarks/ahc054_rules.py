"""AtCoder AHC054 A "Treant's Forest": the case generator and the turn rules, written from the public statement.

An independent implementation; no AtCoder text, tool, input or seed is included. Cells are ``(row, column)``; the
simulation works on flat indices ``row * size + column``. Neighbours are always examined up, down, left, right.

* Case (stream of domain :data:`GENERATOR_DOMAIN`, the Episode's seed): ``N = 20 + below(21)``; the entrance is
  ``(0, N // 2)``; every other cell, shuffled, is a candidate; ``max(1, below(N*N // 6 + 1))`` trees are wanted:
  the candidates are walked in order, each added as a tree and removed again if the empty cells stop being one
  connected component, until that many trees stand. The flower is a uniform pick among the non-tree cells at
  Manhattan distance at least 5 from the entrance (row-major). The adventurer's private target order is the
  shuffled candidate list shuffled again: a permutation of every non-entrance cell.
* A turn (one Action): the Policy's placements are checked as a whole -- rejected (:class:`InvalidPlacements`) if a
  cell repeats, is off the map, already revealed, already a tree or the flower, or if with them the flower can no
  longer be reached from the entrance or from the adventurer (4-neighbour paths through non-tree cells). Then the
  turn counter grows; from the adventurer's cell, along each of the 4 directions, cells are revealed up to and
  including the first tree or the border; the target is chosen: the flower once revealed; a current target is
  dropped if the adventurer cannot reach it on the *tentative* map (unrevealed cells assumed empty, revealed trees
  blocked) or if it is a non-flower cell that became revealed; without a target, the next cell of the private
  order that is unrevealed and tentatively reachable. The adventurer steps to the neighbour with the strictly
  smallest tentative distance to the target (the first examined wins ties). The Episode ends when it stands on the
  flower.

Breadth-first searches run on flat lists with precomputed neighbours; the distances from the target are kept
until the target or the tentative map changes (a revealed tree), so most turns cost no search at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from evoledger.benchmarks.contest_stream import CaseStream

__all__ = [
    "GENERATOR_DOMAIN",
    "MAX_SIZE",
    "MIN_SIZE",
    "ForestCase",
    "ForestSimulation",
    "InvalidPlacements",
    "generate_case",
]

GENERATOR_DOMAIN: Final = b"evopolicygym-treants-forest/generator/v1\0"
MIN_SIZE: Final = 20
MAX_SIZE: Final = 40
MIN_FLOWER_DISTANCE: Final = 5


class InvalidPlacements(ValueError):
    """A set of placements the rules reject as a whole; the message says which rule."""


@dataclass(frozen=True, slots=True)
class ForestCase:
    """One generated forest. ``target_order`` is Host-private: it never reaches the Policy or the Feedback."""

    size: int
    trees: frozenset[tuple[int, int]]
    flower: tuple[int, int]
    target_order: tuple[tuple[int, int], ...]

    @property
    def entrance(self) -> tuple[int, int]:
        return (0, self.size // 2)


def _neighbours(size: int) -> list[tuple[int, ...]]:
    """Each cell's neighbours in the order up, down, left, right."""
    found = []
    for row in range(size):
        for column in range(size):
            cell = row * size + column
            around = []
            if row > 0:
                around.append(cell - size)
            if row < size - 1:
                around.append(cell + size)
            if column > 0:
                around.append(cell - 1)
            if column < size - 1:
                around.append(cell + 1)
            found.append(tuple(around))
    return found


def _distances(neighbours: list[tuple[int, ...]], blocked: bytearray, source: int) -> list[int]:
    """Steps from ``source`` to every cell through unblocked cells (-1: unreachable)."""
    distance = [-1] * len(neighbours)
    distance[source] = 0
    queue = [source]
    for cell in queue:
        step = distance[cell] + 1
        for nxt in neighbours[cell]:
            if distance[nxt] < 0 and not blocked[nxt]:
                distance[nxt] = step
                queue.append(nxt)
    return distance


def _connected(neighbours: list[tuple[int, ...]], trees: bytearray, start: int, empty_cells: int) -> bool:
    """Whether every non-tree cell is reachable from ``start``."""
    reached = _distances(neighbours, trees, start)
    return sum(1 for d in reached if d >= 0) == empty_cells


def generate_case(seed: int) -> ForestCase:
    """The forest of the Episode whose environment seed is ``seed``."""
    stream = CaseStream(GENERATOR_DOMAIN, seed)
    size = MIN_SIZE + stream.below(MAX_SIZE - MIN_SIZE + 1)
    entrance = size // 2
    candidates = [cell for cell in range(size * size) if cell != entrance]
    stream.shuffle(candidates)
    wanted = max(1, stream.below(size * size // 6 + 1))
    neighbours = _neighbours(size)
    trees = bytearray(size * size)
    count = 0
    for cell in candidates:
        trees[cell] = 1
        if _connected(neighbours, trees, entrance, size * size - count - 1):
            count += 1
        else:
            trees[cell] = 0
        if count >= wanted:
            break
    flowers = [
        cell
        for cell in range(size * size)
        if not trees[cell] and cell // size + abs(cell % size - entrance) >= MIN_FLOWER_DISTANCE
    ]
    flower = flowers[stream.below(len(flowers))]
    order = list(candidates)
    stream.shuffle(order)
    return ForestCase(
        size=size,
        trees=frozenset(divmod(cell, size) for cell in range(size * size) if trees[cell]),
        flower=divmod(flower, size),
        target_order=tuple(divmod(cell, size) for cell in order),
    )


class ForestSimulation:
    """One Episode's state, advanced by :meth:`step` (one turn per call)."""

    def __init__(self, case: ForestCase) -> None:
        self.case = case
        size = self.size = case.size
        self._neighbours = _neighbours(size)
        self.trees = bytearray(size * size)
        for row, column in case.trees:
            self.trees[row * size + column] = 1
        self.revealed = bytearray(size * size)
        self.blocked = bytearray(size * size)  # tentative map: revealed trees
        self.flower = case.flower[0] * size + case.flower[1]
        self.entrance = case.entrance[0] * size + case.entrance[1]
        self._order = [row * size + column for row, column in case.target_order]
        self._next_in_order = 0
        self.position = self.entrance
        self.revealed[self.entrance] = 1
        self.revealed_count = 1
        self.newly_revealed: list[int] = [self.entrance]
        self.placed = 0
        self._closed = len(case.trees) + 1  # cells revealed or holding a tree: the trees and the entrance
        self.turn = 0
        self.visited = {self.entrance}
        self._target = -1
        self._map_version = 0
        self._cached: tuple[int, int, list[int]] = (-1, -1, [])
        self._true_distance: list[int] | None = None

    @property
    def done(self) -> bool:
        return self.position == self.flower

    @property
    def flower_revealed(self) -> bool:
        return bool(self.revealed[self.flower])

    def cells(self, flat: list[int]) -> list[list[int]]:
        """Flat indices as ``[row, column]`` pairs."""
        return [list(divmod(cell, self.size)) for cell in flat]

    def flower_path(self) -> int:
        """The adventurer's shortest path to the flower on the true map (every tree counted)."""
        if self._true_distance is None:
            self._true_distance = _distances(self._neighbours, self.trees, self.flower)
        return self._true_distance[self.position]

    def open_cells(self) -> int:
        """Cells a treant could stand on by the per-cell rules (unrevealed, not a tree, not the flower)."""
        return self.size * self.size - self._closed - (0 if self.revealed[self.flower] else 1)

    def check(self, placements: list[tuple[int, int]]) -> list[int]:
        """The placements as flat cells, or :class:`InvalidPlacements` naming the first broken rule."""
        size = self.size
        flat: list[int] = []
        seen: set[int] = set()
        for row, column in placements:
            if not (0 <= row < size and 0 <= column < size):
                raise InvalidPlacements(f"placement [{row}, {column}] is off the {size}x{size} map")
            cell = row * size + column
            if cell in seen:
                raise InvalidPlacements(f"placement [{row}, {column}] appears twice")
            if self.revealed[cell]:
                raise InvalidPlacements(f"placement [{row}, {column}] is an already revealed cell")
            if self.trees[cell]:
                raise InvalidPlacements(f"placement [{row}, {column}] is already a tree")
            if cell == self.flower:
                raise InvalidPlacements(f"placement [{row}, {column}] is the flower")
            seen.add(cell)
            flat.append(cell)
        if flat:
            trees = bytearray(self.trees)
            for cell in flat:
                trees[cell] = 1
            reach = _distances(self._neighbours, trees, self.flower)
            if reach[self.entrance] < 0 or reach[self.position] < 0:
                who = "the entrance" if reach[self.entrance] < 0 else "the adventurer"
                raise InvalidPlacements(f"with these placements the flower cannot be reached from {who}")
        return flat

    def step(self, placements: list[tuple[int, int]]) -> None:
        """Play one turn with ``placements`` (checked first; nothing changes if they are rejected)."""
        if self.done:
            raise RuntimeError("the adventurer already reached the flower")
        flat = self.check(placements)
        for cell in flat:
            self.trees[cell] = 1
        if flat:
            self.placed += len(flat)
            self._closed += len(flat)
            self._true_distance = None
        self.turn += 1
        self._reveal()
        distance = self._choose_target()
        best = -1
        for nxt in self._neighbours[self.position]:
            d = distance[nxt]
            if d >= 0 and (best < 0 or d < distance[best]):
                best = nxt
        if best < 0:
            raise RuntimeError("the adventurer has no step towards its target")
        self.position = best
        self.visited.add(best)

    def _reveal(self) -> None:
        size = self.size
        row, column = divmod(self.position, size)
        fresh: list[int] = []
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            r, c = row, column
            while 0 <= r < size and 0 <= c < size:
                cell = r * size + c
                if not self.revealed[cell]:
                    self.revealed[cell] = 1
                    fresh.append(cell)
                    if self.trees[cell]:
                        self.blocked[cell] = 1
                        self._map_version += 1
                    else:
                        self._closed += 1
                if self.trees[cell]:
                    break
                r += dr
                c += dc
        self.revealed_count += len(fresh)
        self.newly_revealed = fresh

    def _distance_from(self, source: int) -> list[int]:
        target, version, distance = self._cached
        if target != source or version != self._map_version:
            distance = _distances(self._neighbours, self.blocked, source)
            self._cached = (source, self._map_version, distance)
        return distance

    def _choose_target(self) -> list[int]:
        """Update the target; its tentative distances."""
        if self.revealed[self.flower]:
            self._target = self.flower
        if self._target >= 0:
            distance = self._distance_from(self._target)
            if distance[self.position] < 0 or (self._target != self.flower and self.revealed[self._target]):
                self._target = -1
            else:
                return distance
        reachable = _distances(self._neighbours, self.blocked, self.position)
        while self._next_in_order < len(self._order):
            cell = self._order[self._next_in_order]
            self._next_in_order += 1
            if not self.revealed[cell] and reachable[cell] >= 0:
                self._target = cell
                return self._distance_from(cell)
        raise RuntimeError("the adventurer found no target")
