"""Heuristic Policy for ``frozen-lake`` (any map, slippery or not): plan on the public map by value iteration.

The map (``environment_parameters['map']``) and the slip rule are public, so the Policy computes, once, the
probability of reaching the goal from every tile under the best action, and then acts greedily on it. On
non-slippery ice this is a shortest safe path; on slippery ice (the intended move and each perpendicular move
happen with probability 1/3) it prefers moves that cannot slide into a hole.
"""

from typing import Any

import numpy as np

LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3
MOVES = {LEFT: (0, -1), DOWN: (1, 0), RIGHT: (0, 1), UP: (-1, 0)}


def _outcomes(action: int, slippery: bool) -> list[tuple[int, float]]:
    if not slippery:
        return [(action, 1.0)]
    return [((action - 1) % 4, 1 / 3), (action, 1 / 3), ((action + 1) % 4, 1 / 3)]


class Planner:
    def __init__(self, rows: Any, slippery: bool, discount: float = 0.999, sweeps: int = 5000) -> None:
        rows = [str(r) for r in rows]
        height, width = len(rows), len(rows[0])
        self.width = width
        states = height * width
        # move[a][s, s'] = probability of s -> s' under action a when s' is not a hole or the goal;
        # reach[a][s] = probability of stepping onto the goal from s under action a.
        move = np.zeros((4, states, states))
        reach = np.zeros((4, states))
        for r in range(height):
            for c in range(width):
                if rows[r][c] in "GH":
                    continue
                for action in MOVES:
                    for direction, probability in _outcomes(action, slippery):
                        dr, dc = MOVES[direction]
                        nr, nc = min(max(r + dr, 0), height - 1), min(max(c + dc, 0), width - 1)
                        if rows[nr][nc] == "G":
                            reach[action, r * width + c] += probability
                        elif rows[nr][nc] != "H":
                            move[action, r * width + c, nr * width + nc] += probability
        values = np.zeros(states)
        for _ in range(sweeps):
            q = reach + discount * move @ values
            updated = q.max(axis=0)
            if np.max(np.abs(updated - values)) < 1e-10:
                break
            values = updated
        q = reach + discount * move @ values
        # Ties go to the lowest action number, so the plan is the same on every machine.
        self.plan = [int(np.argmax(np.round(q[:, s], 12))) for s in range(states)]

    def act(self, observation: Any) -> Any:
        return self.plan[int(observation)]


def make_policy(context: Any) -> Any:
    parameters = context.environment_parameters
    return Planner(parameters["map"], bool(parameters.get("is_slippery", True)))
