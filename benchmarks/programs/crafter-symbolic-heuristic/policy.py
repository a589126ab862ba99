"""Heuristic Policy for ``crafter/achievement-score-symbolic``: survive, gather wood, build a table and tools, mine.

Observation (a dict): ``terrain`` and ``entities`` are 7x9 grids around the player (row 3, column 4); terrain codes
0 unknown, 1 water, 2 grass, 3 stone, 4 path, 5 sand, 6 tree, 7 lava, 8 coal, 9 iron, 10 diamond, 11 table,
12 furnace; entity codes 0 none, 1 player, 2 cow, 3 zombie, 4 skeleton, 5-8 arrows, 9 young plant, 10 ripe plant,
11 fence. ``inventory`` maps the 16 counters (health, food, drink, energy, sapling, wood, stone, coal, ...) to
0..9; ``facing`` is 0 left, 1 right, 2 up, 3 down; ``sleeping`` 0/1.

Actions: 0 noop, 1 left, 2 right, 3 up, 4 down, 5 do, 6 sleep, 7 place_stone, 8 place_table, 9 place_furnace,
10 place_plant, 11 make_wood_pickaxe, 12 make_stone_pickaxe, 13 make_iron_pickaxe, 14 make_wood_sword,
15 make_stone_sword, 16 make_iron_sword. Moving toward a cell that cannot be entered only turns the player to
face it; ``do`` acts on the faced cell.

The rule, first match wins: fight an adjacent zombie; sleep when tired and no zombie is in sight; drink when
thirsty, eat a cow when hungry; craft what the inventory and a table within one cell allow; place a table once
there is enough wood; place stone and a sapling when possible; then gather (wood until 5, stone and coal once
there is a pickaxe, saplings from grass) by walking along a shortest path (never through lava) to the nearest
visible target; with nothing in sight, explore in a persistent random direction.
"""

from collections import deque
from typing import Any

import numpy as np

PLAYER = (3, 4)
MOVES = {1: (0, -1), 2: (0, 1), 3: (-1, 0), 4: (1, 0)}  # action -> (row, column) step
FACING = {0: 1, 1: 2, 2: 3, 3: 4}  # facing code -> the move action pointing that way
WALKABLE = {2, 4, 5}  # grass, path, sand
WATER, GRASS, STONE, TREE, LAVA, COAL, TABLE = 1, 2, 3, 6, 7, 8, 11
COW, ZOMBIE, RIPE_PLANT = 2, 3, 10
DO, SLEEP, NOOP = 5, 6, 0


class Survivor:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.explore = int(self.rng.integers(1, 5))
        self.explore_left = 0

    def act(self, observation: Any) -> Any:
        terrain = np.asarray(observation["terrain"])
        entities = np.asarray(observation["entities"])
        inv = observation["inventory"]
        facing_move = FACING[int(observation["facing"])]
        if int(observation["sleeping"]):
            return NOOP
        zombies = entities == ZOMBIE
        near_table = bool((terrain[2:5, 3:6] == TABLE).any())

        adjacent_zombie = self._adjacent(zombies)
        if adjacent_zombie is not None:
            return self._face_and_do(adjacent_zombie, facing_move)
        if inv["energy"] <= 2 and not zombies.any():
            return SLEEP
        if inv["drink"] <= 6:
            step = self._toward(terrain, entities, terrain == WATER, facing_move)
            if step is not None:
                return step
        if inv["food"] <= 5:
            step = self._toward(terrain, entities, entities == COW, facing_move)
            if step is not None:
                return step
        ripe = self._toward(terrain, entities, entities == RIPE_PLANT, facing_move)
        if ripe is not None:
            return ripe
        if near_table:
            if inv["wood"] >= 1 and inv["wood_pickaxe"] == 0:
                return 11
            if inv["wood"] >= 1 and inv["wood_sword"] == 0:
                return 14
            if inv["wood"] >= 1 and inv["stone"] >= 1 and inv["stone_pickaxe"] == 0:
                return 12
            if inv["wood"] >= 1 and inv["stone"] >= 1 and inv["stone_sword"] == 0:
                return 15
        faced = self._faced(terrain, facing_move)
        if inv["wood"] >= 4 and not (terrain == TABLE).any() and faced in WALKABLE:
            return 8
        if inv["stone"] >= 2 and faced in (GRASS, 4, 5, WATER):
            return 7
        if inv["sapling"] >= 1 and faced == GRASS:
            return 10
        targets = []
        if inv["wood"] < 5 or (inv["wood_pickaxe"] and inv["stone_pickaxe"] == 0 and inv["wood"] < 2):
            targets.append(terrain == TREE)
        if inv["wood_pickaxe"]:
            targets.append((terrain == STONE) | (terrain == COAL))
        if near_table is False and (terrain == TABLE).any() and inv["wood"] >= 1 and not inv["wood_sword"]:
            targets.append(self._around(terrain == TABLE))
        for mask in targets:
            step = self._toward(terrain, entities, mask, facing_move)
            if step is not None:
                return step
        if faced == GRASS and inv["sapling"] == 0 and self.rng.random() < 0.3:
            return DO  # grass gives a sapling one time in ten
        return self._wander(terrain, entities)

    # -- helpers ------------------------------------------------------------------------------------------------

    @staticmethod
    def _faced(terrain: Any, facing_move: int) -> int:
        dr, dc = MOVES[facing_move]
        return int(terrain[PLAYER[0] + dr, PLAYER[1] + dc])

    @staticmethod
    def _adjacent(mask: Any) -> Any:
        for move, (dr, dc) in MOVES.items():
            if mask[PLAYER[0] + dr, PLAYER[1] + dc]:
                return move
        return None

    @staticmethod
    def _face_and_do(move: int, facing_move: int) -> Any:
        return DO if move == facing_move else move

    @staticmethod
    def _around(mask: Any) -> Any:
        grown = mask.copy()
        grown[1:, :] |= mask[:-1, :]
        grown[:-1, :] |= mask[1:, :]
        grown[:, 1:] |= mask[:, :-1]
        grown[:, :-1] |= mask[:, 1:]
        return grown & ~mask

    def _toward(self, terrain: Any, entities: Any, targets: Any, facing_move: int) -> Any:
        """The next action toward the nearest target: face and ``do`` it when adjacent, else the first path step."""
        if not targets.any():
            return None
        adjacent = self._adjacent(targets)
        if adjacent is not None:
            return self._face_and_do(adjacent, facing_move)
        rows, columns = terrain.shape
        free = np.isin(terrain, list(WALKABLE)) & (entities == 0)
        seen: dict[tuple[int, int], Any] = {PLAYER: None}
        queue = deque([PLAYER])
        while queue:
            cell = queue.popleft()
            for move, (dr, dc) in MOVES.items():
                nxt = (cell[0] + dr, cell[1] + dc)
                if not (0 <= nxt[0] < rows and 0 <= nxt[1] < columns) or nxt in seen:
                    continue
                if targets[nxt] and cell != PLAYER:
                    while seen[cell] is not None and seen[cell][0] != PLAYER:  # walk back to the first step
                        cell = seen[cell][0]
                    return seen[cell][1] if seen[cell] is not None else move
                if free[nxt]:
                    seen[nxt] = (cell, move)
                    queue.append(nxt)
        return None

    def _wander(self, terrain: Any, entities: Any) -> Any:
        for _ in range(8):
            if self.explore_left <= 0:
                self.explore = int(self.rng.integers(1, 5))
                self.explore_left = int(self.rng.integers(3, 9))
            dr, dc = MOVES[self.explore]
            ahead = terrain[PLAYER[0] + dr, PLAYER[1] + dc]
            if ahead != LAVA and ahead in WALKABLE and entities[PLAYER[0] + dr, PLAYER[1] + dc] == 0:
                self.explore_left -= 1
                return self.explore
            self.explore_left = 0
        return NOOP


def make_policy(context: Any) -> Any:
    return Survivor(context.policy_seed)
