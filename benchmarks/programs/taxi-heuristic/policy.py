"""Heuristic Policy for ``taxi``: decode the state, drive the shortest route, pick up, drive, drop off.

The state is ``((taxi_row * 5 + taxi_col) * 5 + passenger_location) * 4 + destination`` with locations 0-3 = R, G,
Y, B and passenger_location 4 = in the taxi. Routes are shortest paths (breadth-first search) on the public map,
whose '|' characters are walls between columns. The plan is recomputed from every observation, so slips (rainy
variant) and a change of destination (fickle passenger) are handled.
"""

from collections import deque
from collections.abc import Iterator
from typing import Any

SOUTH, NORTH, EAST, WEST, PICKUP, DROPOFF = range(6)


class Navigator:
    def __init__(self, rows: Any, locations: Any, order: Any) -> None:
        self.rows = [str(r) for r in rows]
        self.height = len(self.rows) - 2
        self.width = (len(self.rows[0]) - 1) // 2
        self.locations = [(int(locations[name][0]), int(locations[name][1])) for name in order]

    def _moves(self, r: int, c: int) -> Iterator[tuple[int, tuple[int, int]]]:
        if r + 1 < self.height:
            yield SOUTH, (r + 1, c)
        if r > 0:
            yield NORTH, (r - 1, c)
        if c + 1 < self.width and self.rows[1 + r][2 * c + 2] == ":":
            yield EAST, (r, c + 1)
        if c > 0 and self.rows[1 + r][2 * c] == ":":
            yield WEST, (r, c - 1)

    def _first_move(self, start: tuple[int, int], goal: tuple[int, int]) -> int:
        queue = deque([start])
        first: dict[tuple[int, int], int | None] = {start: None}
        while queue:
            here = queue.popleft()
            if here == goal:
                found = first[here]
                return SOUTH if found is None else found
            for move, there in self._moves(*here):
                if there not in first:
                    previous = first[here]
                    first[there] = move if previous is None else previous
                    queue.append(there)
        return SOUTH

    def act(self, observation: Any) -> Any:
        state = int(observation)
        destination = state % 4
        state //= 4
        passenger = state % 5
        state //= 5
        taxi = divmod(state, self.width)
        if passenger == 4:
            target = self.locations[destination]
            return DROPOFF if taxi == target else self._first_move(taxi, target)
        target = self.locations[passenger]
        return PICKUP if taxi == target else self._first_move(taxi, target)


def make_policy(context: Any) -> Any:
    parameters = context.environment_parameters
    return Navigator(parameters["map"], parameters["locations"], parameters["location_order"])
