"""Heuristic Policy for ``robotics/point-maze-umaze``: follow the maze's cells to the goal, then hold still there.

The maze map and cell size are public (``context.environment_parameters``: ``maze_map`` rows top to bottom, 1 =
wall; ``maze_size_scaling``). Cell (row i, column j) has its centre at x = (j - columns/2 + 0.5) * size,
y = (rows/2 - i - 0.5) * size. Each step the Policy finds the ball's cell and the goal's cell, takes the shortest
path between them through open cells (breadth-first search), aims at the centre of the next cell on it (at the goal
itself once in the goal's cell) and pushes with a proportional-derivative force: KP * (aim - position) - KD *
velocity, clipped to [-1, 1]. The damping term stops it on the goal instead of orbiting it.
"""

from collections import deque
from typing import Any

import numpy as np

KP = 10.0
KD = 2.0


class MazeFollower:
    def __init__(self, maze_map: Any, size: float, dtype: Any) -> None:
        self.map = [list(row) for row in maze_map]
        self.size = float(size)
        self.rows, self.columns = len(self.map), len(self.map[0])
        self.dtype = dtype

    def cell(self, xy: Any) -> tuple[int, int]:
        j = int(np.rint(xy[0] / self.size + self.columns / 2 - 0.5))
        i = int(np.rint(self.rows / 2 - 0.5 - xy[1] / self.size))
        return min(max(i, 0), self.rows - 1), min(max(j, 0), self.columns - 1)

    def centre(self, cell: tuple[int, int]) -> Any:
        i, j = cell
        return np.array([(j - self.columns / 2 + 0.5) * self.size, (self.rows / 2 - i - 0.5) * self.size])

    def next_cell(self, start: tuple[int, int], goal: tuple[int, int]) -> tuple[int, int]:
        previous: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            if here == goal:
                break
            i, j = here
            for step in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                inside = 0 <= step[0] < self.rows and 0 <= step[1] < self.columns
                if inside and step not in previous and self.map[step[0]][step[1]] != 1:
                    previous[step] = here
                    queue.append(step)
        if goal not in previous:
            return goal
        here = goal
        while previous[here] is not None and previous[here] != start:
            here = previous[here]  # type: ignore[assignment]
        return here

    def act(self, observation: Any) -> Any:
        state = np.asarray(observation["observation"], dtype=np.float64)
        goal = np.asarray(observation["desired_goal"], dtype=np.float64)
        position, velocity = state[:2], state[2:4]
        here, there = self.cell(position), self.cell(goal)
        aim = goal if here == there else self.centre(self.next_cell(here, there))
        force = np.clip(KP * (aim - position) - KD * velocity, -1.0, 1.0)
        return force.astype(self.dtype)


def make_policy(context: Any) -> Any:
    parameters = context.environment_parameters
    return MazeFollower(parameters["maze_map"], parameters["maze_size_scaling"], context.action_space.dtype)
