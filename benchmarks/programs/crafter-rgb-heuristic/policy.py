"""Heuristic Policy for ``crafter/achievement-score`` (RGB observations): read the map from colours, then gather,
build and survive.

Observation: a uint8 image ``[64, 64, 3]``; its top 49 rows are the 9x7-cell local view (7x7 pixels per cell, the
player in row 3, column 4), the bottom rows the inventory strip. Actions: 0 noop, 1 left, 2 right, 3 up, 4 down,
5 do, 6 sleep, 7 place_stone, 8 place_table, 9 place_furnace, 10 place_plant, 11 make_wood_pickaxe,
12 make_stone_pickaxe, 13 make_iron_pickaxe, 14 make_wood_sword, 15 make_stone_sword, 16 make_iron_sword.

Perception: each cell's mean and standard deviation of R, G, B go to the nearest of the reference colours in
``CENTROIDS`` (measured on daytime frames; about 99 % of daytime cells right, night frames are noisy). The
inventory is not read from the image: the Policy counts what its own ``do`` on trees and stone should have
collected. The day/night cycle is a known function of the step (period 300), so at night the Policy sleeps.

The rule, first match wins: at night sleep; fight an adjacent zombie; drink every so often when water is in sight;
hit a cow every so often; craft near a table; place a table once about four wood were collected; place stone and
saplings; walk along a shortest path (never through lava) to the nearest tree, then stone; else explore.
"""

import math
from collections import deque
from typing import Any

import numpy as np

PLAYER = (3, 4)
MOVES = {1: (0, -1), 2: (0, 1), 3: (-1, 0), 4: (1, 0)}  # action -> (row, column) step
WALKABLE = {2, 4, 5}  # grass, path, sand
WATER, GRASS, STONE, TREE, LAVA, COAL, TABLE = 1, 2, 3, 6, 7, 8, 11
COW, ZOMBIE, RIPE_PLANT = 102, 103, 110  # entities get codes 100 + entity code
DO, SLEEP, NOOP = 5, 6, 0
CELL = 7
# (code, mean R, G, B, std R, G, B): terrain codes 1-12, entities 100 + code (1 player, 2 cow, 3 zombie, ...)
CENTROIDS = np.array(
    [
        (101, 86.5, 144.7, 66.5, 75.5, 46.9, 62.8),
        (102, 70.9, 136.2, 50.0, 65.9, 48.3, 63.7),
        (103, 44.8, 126.9, 48.2, 39.0, 39.7, 45.7),
        (104, 99.1, 124.1, 78.4, 49.4, 39.3, 52.9),
        (109, 15.8, 122.7, 9.6, 8.8, 37.2, 8.4),
        (1, 43.5, 117.1, 196.5, 23.5, 24.8, 27.7),
        (2, 22.5, 151.6, 14.0, 3.3, 18.2, 7.9),
        (3, 120.5, 121.2, 123.2, 13.2, 13.2, 13.2),
        (4, 118.6, 101.2, 71.5, 6.2, 5.6, 8.1),
        (5, 205.0, 190.7, 124.2, 6.3, 6.9, 9.4),
        (6, 38.6, 92.8, 22.8, 44.8, 36.9, 23.4),
        (7, 247.3, 116.1, 10.8, 15.2, 39.3, 27.4),
        (8, 92.9, 93.5, 95.2, 48.9, 48.9, 48.9),
        (9, 120.3, 107.8, 103.8, 35.2, 30.4, 32.3),
        (10, 91.0, 139.1, 143.2, 56.5, 54.6, 55.6),
        (11, 122.6, 106.8, 79.3, 32.5, 23.0, 37.1),
    ]
)


def daylight(step: int) -> float:
    """Crafter's daylight at ``step`` (the world's clock; the image darkens below 0.5)."""
    progress = (step / 300) % 1 + 0.3
    return 1 - abs(math.cos(math.pi * progress)) ** 3


def perceive(image: Any) -> tuple[Any, Any]:
    """(terrain, entities) codes of the 7x9 local view, classified by colour."""
    view = np.asarray(image, dtype=np.float64)[: 7 * CELL, : 9 * CELL].reshape(7, CELL, 9, CELL, 3)
    features = np.concatenate([view.mean(axis=(1, 3)), view.std(axis=(1, 3))], axis=-1)  # (7, 9, 6)
    distances = ((features[:, :, None, :] - CENTROIDS[None, None, :, 1:]) ** 2).sum(-1)
    codes = CENTROIDS[:, 0].astype(int)[distances.argmin(-1)]
    entities = np.where(codes >= 100, codes, 0)
    terrain = np.where(codes >= 100, GRASS, codes)  # creatures mostly stand on grass
    terrain[PLAYER] = GRASS
    entities[PLAYER] = 0
    return terrain, entities


class Gatherer:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.explore = int(self.rng.integers(1, 5))
        self.explore_left = 0
        self.step = 0
        self.facing = 4  # crafter's player starts facing down
        self.wood = self.stone = 0
        self.made: set[int] = set()
        self.since_drink = self.since_food = 0

    def act(self, observation: Any) -> Any:
        action = self._choose(observation)
        self.step += 1
        self.since_drink += 1
        self.since_food += 1
        if action in MOVES:
            self.facing = action
        return action

    def _choose(self, observation: Any) -> Any:
        if daylight(self.step) < 0.35:
            return SLEEP
        terrain, entities = perceive(observation)
        facing_move = self.facing
        zombies = entities == ZOMBIE
        adjacent_zombie = self._adjacent(zombies)
        if adjacent_zombie is not None:
            return self._face_and_do(adjacent_zombie, facing_move)
        faced = self._faced(terrain, facing_move)
        faced_entity = int(entities[PLAYER[0] + MOVES[facing_move][0], PLAYER[1] + MOVES[facing_move][1]])
        if self.since_drink > 25:
            step = self._toward(terrain, entities, terrain == WATER, facing_move)
            if step is not None:
                if step == DO and faced == WATER:
                    self.since_drink -= 8
                return step
        if self.since_food > 120:
            step = self._toward(terrain, entities, entities == COW, facing_move)
            if step is not None:
                if step == DO and faced_entity == COW:
                    self.since_food -= 40
                return step
        near_table = bool((terrain[2:5, 3:6] == TABLE).any())
        if near_table:
            for action, wood, stone in ((11, 1, 0), (14, 1, 0), (12, 1, 1), (15, 1, 1)):
                if action not in self.made and self.wood >= wood and self.stone >= stone:
                    self.made.add(action)
                    self.wood -= wood
                    self.stone -= stone
                    return action
        if self.wood >= 4 and not (terrain == TABLE).any() and faced in WALKABLE:
            self.wood -= 2
            return 8
        if self.stone >= 2 and faced in (GRASS, 4, 5, WATER):
            self.stone -= 1
            return 7
        if faced == GRASS and self.rng.random() < 0.05:
            return 10  # place a sapling, if one was collected
        targets = []
        if self.wood < 5:
            targets.append(terrain == TREE)
        if 11 in self.made:
            targets.append((terrain == STONE) | (terrain == COAL))
        if (terrain == TABLE).any() and not near_table and self.wood >= 1 and 14 not in self.made:
            targets.append(self._around(terrain == TABLE))
        for mask in targets:
            step = self._toward(terrain, entities, mask, facing_move)
            if step is not None:
                if step == DO and faced == TREE:
                    self.wood += 1
                elif step == DO and faced == STONE:
                    self.stone += 1
                return step
        if faced == GRASS and self.rng.random() < 0.3:
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
    return Gatherer(context.policy_seed)
