"""Survival Policy for ``crafter/long-horizon-survival-symbolic``: gather, then sleep walled in through the night.

Observation (a dict): ``terrain`` and ``entities`` are 7x9 grids around the player (row 3, column 4); terrain codes
0 unknown, 1 water, 2 grass, 3 stone, 4 path, 5 sand, 6 tree, 7 lava, 8 coal, 9 iron, 10 diamond, 11 table,
12 furnace; entity codes 0 none, 1 player, 2 cow, 3 zombie, 4 skeleton, 5-8 arrows, 9 young plant, 10 ripe plant,
11 fence. ``inventory`` maps the 16 counters (health, food, drink, energy, sapling, wood, stone, coal, ...) to
0..9; ``facing`` is 0 left, 1 right, 2 up, 3 down; ``sleeping`` 0/1.

Actions: 0 noop, 1 left, 2 right, 3 up, 4 down, 5 do, 6 sleep, 7 place_stone, 8 place_table, 9 place_furnace,
10 place_plant, 11 make_wood_pickaxe, 12 make_stone_pickaxe, 13 make_iron_pickaxe, 14 make_wood_sword,
15 make_stone_sword, 16 make_iron_sword. Moving toward a cell that cannot be entered only turns the player to
face it; ``do`` acts on the faced cell.

Zombies come out on grass when the light fades and hit a sleeping player for 7 of its 9 health, so sleeping in the
open is what kills. The shelter: two cells in a row (dug out of stone with the pickaxe, or open ground) whose four
side cells are solid; the player walks in from one end cell E, walls the far end with a stone, steps back and
walls E (a move faces the next cell in its direction, so the cell walked in from can be faced from the pocket's
other cell). Inside it sleeps until energy is full and stays until daylight returns, then digs E out.

The rule, first match wins: in the shelter, sleep or wait, then leave; fight an adjacent zombie; drink when
thirsty, eat a cow when hungry; at dusk or when tired, with stone enough, walk to the nearest shelter site and
build it; craft what the inventory and a table within one cell allow; place a table once there is enough wood;
then gather (wood until 5, stone up to 5 and coal once there is a pickaxe, saplings from grass) by walking along a
shortest path (never through lava) to the nearest visible target; with nothing in sight, explore in a persistent
random direction.
"""

from collections import deque
from typing import Any

import numpy as np

PLAYER = (3, 4)
MOVES = {1: (0, -1), 2: (0, 1), 3: (-1, 0), 4: (1, 0)}  # action -> (row, column) step
FACING = {0: 1, 1: 2, 2: 3, 3: 4}  # facing code -> the move action pointing that way
WALKABLE = {2, 4, 5}  # grass, path, sand
PLACEABLE = {1, 2, 4, 5, 7}  # where a stone can be placed: water, grass, path, sand, lava
REVERSE = {1: 2, 2: 1, 3: 4, 4: 3}
PLACE_STONE = 7
WATER, GRASS, STONE, TREE, LAVA, COAL, TABLE = 1, 2, 3, 6, 7, 8, 11
COW, ZOMBIE, RIPE_PLANT = 2, 3, 10
DO, SLEEP, NOOP = 5, 6, 0


class Survivor:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.explore = int(self.rng.integers(1, 5))
        self.explore_left = 0
        self.plan: list[int] = []
        self.sheltered = False
        self.exit_move = 0
        self.daylight = 1.0

    def act(self, observation: Any) -> Any:
        terrain = np.asarray(observation["terrain"])
        entities = np.asarray(observation["entities"])
        inv = observation["inventory"]
        facing_move = FACING[int(observation["facing"])]
        daylight = float(observation["daylight"])
        falling = daylight < self.daylight
        self.daylight = daylight
        if int(observation["sleeping"]):
            return NOOP
        if self.plan:
            return self.plan.pop(0)
        if self.sheltered:
            if self._enclosed(terrain, entities) and min(inv["drink"], inv["food"]) > 2:
                if inv["energy"] < 9 and (daylight < 0.7 or inv["energy"] <= 5):
                    return SLEEP
                if daylight < 0.6 or (falling and daylight < 0.8):
                    return NOOP
            self.sheltered = False
            if self.exit_move and self._faced(terrain, facing_move) == STONE:
                self.plan = [self.exit_move]
                return DO
        zombies = entities == ZOMBIE
        near_table = bool((terrain[2:5, 3:6] == TABLE).any())

        adjacent_zombie = self._adjacent(zombies)
        if adjacent_zombie is not None:
            return self._face_and_do(adjacent_zombie, facing_move)
        if inv["drink"] <= 6:
            step = self._toward(terrain, entities, terrain == WATER, facing_move)
            if step is not None:
                return step
        if inv["food"] <= 5:
            step = self._toward(terrain, entities, entities == COW, facing_move)
            if step is not None:
                return step
        dusk = (falling and daylight < 0.55) or daylight < 0.3 or inv["energy"] <= 3
        if dusk and inv["stone"] >= 2:
            step = self._shelter(terrain, entities, facing_move, bool(inv["wood_pickaxe"]))
            if step is not None:
                return step
        if inv["energy"] == 0 and not zombies.any():
            return SLEEP
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
        if inv["sapling"] >= 1 and faced == GRASS:
            return 10
        targets = []
        if inv["wood"] < 5 or (inv["wood_pickaxe"] and inv["stone_pickaxe"] == 0 and inv["wood"] < 2):
            targets.append(terrain == TREE)
        if inv["wood_pickaxe"] and inv["stone"] < 5:
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

    # -- the shelter --------------------------------------------------------------------------------------------

    @staticmethod
    def _solid(terrain: Any, entities: Any, cell: tuple[int, int]) -> bool:
        """Whether no zombie can step onto ``cell`` (the world's edge is solid; outside the view is not)."""
        rows, columns = terrain.shape
        if not (0 <= cell[0] < rows and 0 <= cell[1] < columns):
            return False
        return int(terrain[cell]) not in WALKABLE

    def _enclosed(self, terrain: Any, entities: Any) -> bool:
        """Whether the cells the player can walk to from where it stands are at most two, all walled in."""
        region = {PLAYER}
        queue = deque([PLAYER])
        while queue:
            cell = queue.popleft()
            for dr, dc in MOVES.values():
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt in region or self._solid(terrain, entities, nxt):
                    continue
                region.add(nxt)
                if len(region) > 2:
                    return False
                queue.append(nxt)
        return True

    def _site(self, terrain: Any, entities: Any, entry: tuple[int, int], move: int, dig: bool) -> bool:
        """Whether two cells in direction ``move`` from ``entry`` make a shelter entered from ``entry``."""
        dr, dc = MOVES[move]
        rows, columns = terrain.shape
        cells = [(entry[0] + k * dr, entry[1] + k * dc) for k in (1, 2, 3)]
        if not all(0 <= r < rows and 0 <= c < columns for r, c in cells):
            return False
        for cell in cells[:2]:
            kind = int(terrain[cell])
            if entities[cell] != 0 or not (kind in WALKABLE or (dig and kind == STONE)):
                return False
            for side in ((dc, dr), (-dc, -dr)):
                if not self._solid(terrain, entities, (cell[0] + side[0], cell[1] + side[1])):
                    return False
        far = cells[2]
        return self._solid(terrain, entities, far) or (int(terrain[far]) in PLACEABLE and entities[far] == 0)

    def _shelter(self, terrain: Any, entities: Any, facing_move: int, dig: bool) -> Any:
        """Build the shelter from here when this cell is an entry, else the first step toward the nearest entry."""
        for move in MOVES:
            if self._site(terrain, entities, PLAYER, move, dig):
                self.plan = self._build(terrain, move)
                self.sheltered = True
                return self.plan.pop(0)
        rows, columns = terrain.shape
        entries = np.zeros_like(terrain, dtype=bool)
        for r in range(rows):
            for c in range(columns):
                if int(terrain[r, c]) in WALKABLE and entities[r, c] in (0, 1):
                    entries[r, c] = any(self._site(terrain, entities, (r, c), m, dig) for m in MOVES)
        entries[PLAYER] = False
        if not entries.any():
            return None
        return self._walk_to(terrain, entities, entries)

    def _build(self, terrain: Any, move: int) -> list[int]:
        """The actions that dig or walk into the two cells, wall the far end, step back and wall the entry."""
        dr, dc = MOVES[move]
        first = int(terrain[PLAYER[0] + dr, PLAYER[1] + dc])
        second = int(terrain[PLAYER[0] + 2 * dr, PLAYER[1] + 2 * dc])
        far = int(terrain[PLAYER[0] + 3 * dr, PLAYER[1] + 3 * dc])
        plan = [move, DO, move] if first == STONE else [move]
        plan += [DO, move] if second == STONE else [move]
        if far in PLACEABLE:
            plan.append(PLACE_STONE)
        plan += [REVERSE[move], PLACE_STONE]
        self.exit_move = REVERSE[move]
        return plan

    def _walk_to(self, terrain: Any, entities: Any, goal: Any) -> Any:
        """The first step of a shortest walk onto a ``goal`` cell (over free walkable cells), or None."""
        rows, columns = terrain.shape
        free = np.isin(terrain, list(WALKABLE)) & (entities == 0)
        seen: dict[tuple[int, int], Any] = {PLAYER: None}
        queue = deque([PLAYER])
        while queue:
            cell = queue.popleft()
            for move, (dr, dc) in MOVES.items():
                nxt = (cell[0] + dr, cell[1] + dc)
                if not (0 <= nxt[0] < rows and 0 <= nxt[1] < columns) or nxt in seen or not free[nxt]:
                    continue
                seen[nxt] = (cell, move)
                if goal[nxt]:
                    while seen[nxt][0] != PLAYER:
                        nxt = seen[nxt][0]
                    return seen[nxt][1]
                queue.append(nxt)
        return None

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
