"""Heuristic Policy for ``cliff-walking``: a safe path around the cliff.

Climb from the start to a safe row, walk right along it to the last column, then walk down to the goal. On
non-slippery ice the safe row is the one just above the cliff (the 13-step optimal path); when
``environment_parameters['is_slippery']`` is true the walker keeps to the top row, as far from the cliff as the grid
allows, and steps back up whenever a slip pushes it down.
"""

from typing import Any

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


class SafePath:
    def __init__(self, rows: int, columns: int, safe_row: int) -> None:
        self.columns = columns
        self.safe_row = safe_row

    def act(self, observation: Any) -> Any:
        row, column = divmod(int(observation), self.columns)
        if column == self.columns - 1:
            return DOWN
        if row > self.safe_row:
            return UP
        return RIGHT


def make_policy(context: Any) -> Any:
    parameters = context.environment_parameters
    rows, columns = parameters.get("shape", [4, 12])
    slippery = bool(parameters.get("is_slippery", False))
    return SafePath(int(rows), int(columns), 0 if slippery else int(rows) - 2)
