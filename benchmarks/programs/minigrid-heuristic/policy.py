"""MiniGrid / BabyAI heuristic: build a map from the 7x7 view, parse the mission, plan shortest paths.

* Map: the agent's direction is absolute, so its cell is tracked from the start by dead reckoning (a forward move
  is checked against the walls it sees afterwards). Each view is written into a world map of object, colour, state.
* Mission: "get to the goal" missions, "go to / pick up / open X", "put X next to / near Y", Fetch's "get a X",
  sequences joined by ", then", "then", "and" and "after you", locations ("on your left") relative to the start,
  and Memory's "matching object" (the first key or ball seen is the cue). An empty mission (Playground) explores.
* Planning: Dijkstra over known cells (unknown cells allowed at a higher cost; lava and walls never); closed doors
  are opened on the way, locked doors once the key of their colour is carried. When the target is unknown the agent
  explores the nearest unseen cell; when nothing is left to explore it fetches the key of a locked door, opens
  boxes (keys hide in them) and finally moves objects that block the way.
"""

import heapq
import random
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

EMPTY, WALL, FLOOR, DOOR, KEY, BALL, BOX, GOAL, LAVA = 1, 2, 3, 4, 5, 6, 7, 8, 9
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = range(7)
DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))
COLOURS = {"red": 0, "green": 1, "blue": 2, "purple": 3, "yellow": 4, "grey": 5}
TYPES = {"key": KEY, "ball": BALL, "box": BOX, "door": DOOR, "object": None}
SIZE = 72
_DESC = re.compile(
    r"(?:the|a|an)\s+(?:(red|green|blue|purple|yellow|grey)\s+)?(key|ball|box|door|object)"
    r"(?:\s+(on your left|on your right|in front of you|behind you))?"
)
_LOC = {"on your left": "left", "on your right": "right", "in front of you": "front", "behind you": "behind"}
_INF = float("inf")
ARRIVED = -1  # route(): already next to the target and facing it
Cell = tuple[int, int]
Desc = tuple[int | None, int | None, str | None]
Clause = tuple[Any, ...]


def _desc(text: str) -> Desc | None:
    match = _DESC.search(text)
    if match is None:
        return None
    colour, kind, loc = match.groups()
    return (COLOURS.get(colour), TYPES[kind], _LOC.get(loc))


def _clause(text: str, verb: str | None) -> tuple[Clause | None, str | None]:
    text = text.strip().strip(",").strip()
    for prefix, kind in (("go to", "goto"), ("pick up", "pickup"), ("open", "open"), ("put", "put")):
        if text.startswith(prefix):
            verb, text = kind, text[len(prefix) :]
            break
    else:
        fetch = re.match(r"(?:you must fetch|go fetch|go get|fetch|get)\s+", text)
        if fetch:
            verb, text = "pickup", text[fetch.end() :]
    if verb == "put":
        parts = re.split(r"\s+(?:next to|near)\s+", text, maxsplit=1)
        if len(parts) == 2 and _desc(parts[0]) and _desc(parts[1]):
            return ("put", _desc(parts[0]), _desc(parts[1])), verb
        return None, verb
    desc = _desc(text)
    return ((verb, desc) if verb and desc else None), verb


def parse_mission(mission: str) -> list[Clause]:
    """The mission as a list of clauses: ("goal",), ("memory",), ("explore",), (verb, desc) or ("put", x, y)."""
    mission = mission.lower().strip()
    if "goal" in mission:
        return [("goal",)]
    if "matching object" in mission:
        return [("memory",)]
    clauses, verb = [], None
    for part in re.split(r",?\s+then\s+", mission):
        steps = part.split(" after you ")
        for step in reversed(steps) if len(steps) > 1 else steps:
            for text in step.split(" and "):
                clause, verb = _clause(text, verb)
                if clause is not None:
                    clauses.append(clause)
    return clauses or [("explore",)]


class Agent:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.kind = [[0] * SIZE for _ in range(SIZE)]
        self.colour = [[0] * SIZE for _ in range(SIZE)]
        self.state = [[0] * SIZE for _ in range(SIZE)]
        self.pos = (SIZE // 2, SIZE // 2)
        self.start = self.pos
        self.start_dir = 0
        self.dir = 0
        self.box = [self.pos[0], self.pos[1], self.pos[0], self.pos[1]]
        self.clauses: list[Clause] | None = None
        self.step = 0
        self.carrying: tuple[int, int] | None = None
        self.last: int | None = None

    # ---- perception ----------------------------------------------------------------------------------------
    def _cells(self, pos: Cell, direction: int) -> Iterator[tuple[int, int, int, int]]:
        fx, fy = DIRS[direction]
        rx, ry = -fy, fx
        for i in range(7):
            for j in range(7):
                ahead, side = 6 - j, i - 3
                yield i, j, pos[0] + fx * ahead + rx * side, pos[1] + fy * ahead + ry * side

    def _agreement(self, image: Any, pos: Cell, direction: int) -> int:
        score = 0
        for i, j, x, y in self._cells(pos, direction):
            seen, known = int(image[i][j][0]), self.kind[x][y] if 0 <= x < SIZE and 0 <= y < SIZE else 0
            if seen in (WALL, DOOR, GOAL, LAVA) and known:
                score += 1 if seen == known else -1
        return score

    def observe(self, image: Any, direction: int) -> None:
        if self.last == FORWARD and self.moved_from is not None:
            stay = self.moved_from
            if self._agreement(image, stay, direction) > self._agreement(image, self.pos, direction):
                self.pos = stay
        self.dir = direction
        if self.clauses == [("goal",)]:  # balls in goal missions are moving obstacles: trust only the current view
            for x, y in self.cells(lambda a, b: self.kind[a][b] == BALL):
                self.kind[x][y] = EMPTY
        for i, j, x, y in self._cells(self.pos, direction):
            kind = int(image[i][j][0])
            if kind == 0 or not (0 <= x < SIZE and 0 <= y < SIZE) or (i, j) == (3, 6):
                continue
            self.kind[x][y], self.colour[x][y], self.state[x][y] = kind, int(image[i][j][1]), int(image[i][j][2])
            self.box = [min(self.box[0], x), min(self.box[1], y), max(self.box[2], x), max(self.box[3], y)]
        held = image[3][6]
        self.carrying = (int(held[0]), int(held[1])) if int(held[0]) in (KEY, BALL, BOX) else None
        px, py = self.pos
        self.kind[px][py] = self.kind[px][py] if self.kind[px][py] in (DOOR, GOAL, FLOOR) else EMPTY

    def front(self) -> Cell:
        fx, fy = DIRS[self.dir]
        return (self.pos[0] + fx, self.pos[1] + fy)

    # ---- matching --------------------------------------------------------------------------------------------
    def matches(self, cell: Cell, desc: Desc) -> bool:
        colour, kind, loc = desc
        x, y = cell
        k = self.kind[x][y]
        if kind is None:
            if k not in (KEY, BALL, BOX):
                return False
        elif k != kind:
            return False
        if colour is not None and self.colour[x][y] != colour:
            return False
        if loc is not None:
            fx, fy = DIRS[self.start_dir]
            vx, vy = x - self.start[0], y - self.start[1]
            along, side = vx * fx + vy * fy, vx * -fy + vy * fx
            ok = {"left": side < 0, "right": side > 0, "front": along > 0, "behind": along < 0}[loc]
            if not ok:
                return False
        return True

    def cells(self, predicate: Callable[[int, int], bool]) -> list[Cell]:
        x0, y0, x1, y1 = self.box
        return [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1) if predicate(x, y)]

    def found(self, desc: Desc) -> list[Cell]:
        return self.cells(lambda x, y: self.kind[x][y] in (KEY, BALL, BOX, DOOR) and self.matches((x, y), desc))

    # ---- planning --------------------------------------------------------------------------------------------
    def cost(self, x: int, y: int, unknown: bool, blockers: bool) -> float:
        if not (0 <= x < SIZE and 0 <= y < SIZE):
            return _INF
        k = self.kind[x][y]
        if k in (EMPTY, FLOOR, GOAL):
            return 1
        if k == 0:
            return 3 if unknown else _INF
        if k == DOOR:
            state = self.state[x][y]
            if state == 2 and self.carrying != (KEY, self.colour[x][y]):
                return _INF
            return 1 if state == 0 else 2
        if k in (KEY, BALL, BOX) and blockers:
            return 12
        return _INF

    def route(self, targets: Iterable[Cell], unknown: bool = True, blockers: bool = False) -> int | None:
        """The next action towards standing next to (and facing) one of ``targets``, ARRIVED, or None."""
        targets = set(targets)
        if not targets:
            return None
        x0, y0, x1, y1 = self.box
        lo_x, lo_y, hi_x, hi_y = x0 - 1, y0 - 1, x1 + 1, y1 + 1
        dist: dict[Cell, float] = {self.pos: 0}
        parent: dict[Cell, Cell] = {}
        queue: list[tuple[float, Cell]] = [(0, self.pos)]
        best: tuple[float, Cell, Cell] | None = None
        while queue:
            d, cell = heapq.heappop(queue)
            if d > dist.get(cell, _INF):
                continue
            if best is not None and d >= best[0]:
                break
            for dx, dy in DIRS:
                near = (cell[0] + dx, cell[1] + dy)
                if near in targets and (best is None or d < best[0]):
                    best = (d, cell, near)
            for dx, dy in DIRS:
                near = (cell[0] + dx, cell[1] + dy)
                if not (lo_x <= near[0] <= hi_x and lo_y <= near[1] <= hi_y):
                    continue
                step = self.cost(near[0], near[1], unknown, blockers)
                if step == _INF or d + step >= dist.get(near, _INF):
                    continue
                dist[near], parent[near] = d + step, cell
                heapq.heappush(queue, (d + step, near))
        if best is None:
            return None
        _, stand, target = best
        if stand == self.pos:
            turn = self.face(target)
            return ARRIVED if turn is None else turn
        cell = stand
        while parent[cell] != self.pos:
            cell = parent[cell]
        turn = self.face(cell)
        if turn is not None:
            return turn
        x, y = cell
        k = self.kind[x][y]
        if k == DOOR and self.state[x][y] > 0:
            return TOGGLE
        if k in (KEY, BALL, BOX):  # a blocker: put down what is carried, pick it up, put it aside
            self.clearing = cell
            return PICKUP if self.carrying is None else self.drop_aside(avoid=cell)
        if k == 0:
            return self.rng.choice((LEFT, RIGHT))
        return FORWARD

    def face(self, cell: Cell) -> int | None:
        dx, dy = cell[0] - self.pos[0], cell[1] - self.pos[1]
        want = DIRS.index((dx, dy))
        turn = (want - self.dir) % 4
        return None if turn == 0 else (LEFT if turn == 3 else RIGHT)

    def drop_aside(self, avoid: Cell | None = None) -> int:
        """Drop the carried object beside the agent (not on ``avoid``), on a cell that blocks no doorway: turn
        towards one, or walk on to find one (after a few steps, any empty cell will do)."""
        self.drop_tries += 1
        order = [(self.dir + k) % 4 for k in (0, 1, 3, 2)]
        cells = [(self.pos[0] + DIRS[d][0], self.pos[1] + DIRS[d][1]) for d in order]
        relaxed = self.drop_tries > 8
        for cell in cells:
            if cell != avoid and (self.droppable(cell) or (relaxed and self.kind[cell[0]][cell[1]] == EMPTY)):
                turn = self.face(cell)
                self.dropping = turn is not None
                return DROP if turn is None else turn
        self.dropping = True
        for cell in cells:
            if cell != avoid and (self.kind[cell[0]][cell[1]] in (EMPTY, FLOOR) or self.is_open_door(cell)):
                turn = self.face(cell)
                return FORWARD if turn is None else turn
        return self.rng.choice((LEFT, RIGHT))

    def is_open_door(self, cell: Cell) -> bool:
        return self.kind[cell[0]][cell[1]] == DOOR and self.state[cell[0]][cell[1]] == 0

    def droppable(self, cell: Cell) -> bool:
        """An empty cell that blocks no doorway."""
        x, y = cell
        return self.kind[x][y] == EMPTY and all(self.kind[x + dx][y + dy] != DOOR for dx, dy in DIRS)

    def frontier(self) -> list[Cell]:
        def unseen_edge(x: int, y: int) -> bool:
            if self.kind[x][y] != 0:
                return False
            return any(self.cost(x + dx, y + dy, False, False) < _INF for dx, dy in DIRS)

        x0, y0, x1, y1 = self.box
        return [(x, y) for x in range(x0 - 1, x1 + 2) for y in range(y0 - 1, y1 + 2) if unseen_edge(x, y)]

    def unblock(self, goal_cells: list[Cell], allow_blockers: bool) -> int:
        """When the target is unknown or unreachable: explore, then keys for locked doors, boxes, blockers."""
        action = self.route(self.frontier(), unknown=False)
        if action not in (None, ARRIVED):
            return action
        locked = self.cells(lambda x, y: self.kind[x][y] == DOOR and self.state[x][y] == 2)
        colours = {self.colour[x][y] for x, y in locked}
        if colours and (self.carrying is None or self.carrying[0] != KEY or self.carrying[1] not in colours):
            keys = self.cells(lambda x, y: self.kind[x][y] == KEY and self.colour[x][y] in colours)
            action = self.pick(keys)
            if action is not None:
                return action
        if self.kind_wanted != BOX:
            boxes = self.cells(lambda x, y: self.kind[x][y] == BOX)
            action = self.route(boxes, unknown=False)
            if action == ARRIVED:
                return TOGGLE
            if action is not None:
                return action
        if allow_blockers:
            for targets in (goal_cells, self.frontier()):
                action = self.route(targets, unknown=True, blockers=True)
                if action not in (None, ARRIVED):
                    return action
        return self.wander()

    def wander(self) -> int:
        if self.cost(*self.front(), False, False) == 1 and self.rng.random() < 0.7:
            return FORWARD
        return self.rng.choice((LEFT, RIGHT))

    def pick(self, cells: list[Cell]) -> int | None:
        action = self.route(cells, unknown=True)
        if action == ARRIVED:
            return PICKUP if self.carrying is None else self.drop_aside(avoid=self.front())
        return action

    # ---- acting ----------------------------------------------------------------------------------------------
    def act(self, observation: Any) -> int:
        image, direction = observation["image"], int(observation["direction"])
        if self.clauses is None:
            self.clauses = parse_mission(str(observation["mission"]))
            self.start_dir = direction
        self.observe(image, direction)
        if self.dropping and self.carrying is not None:
            action = self.drop_aside(avoid=self.clearing)
        elif self.clearing is not None:
            action = self.clear()
        else:
            action = self.decide()
        self.dropping = self.dropping and action != DROP and self.carrying is not None
        self.drop_tries = self.drop_tries if self.dropping else 0
        self.moved_from = None
        if action == FORWARD:
            fx, fy = self.front()
            k = self.kind[fx][fy]
            if k in (EMPTY, FLOOR, GOAL, LAVA) or (k == DOOR and self.state[fx][fy] == 0):
                self.moved_from, self.pos = self.pos, (fx, fy)
        self.last = action
        self.step += 1
        return action

    def decide(self) -> int:
        while True:
            if not self.clauses:
                return self.wander()
            clause = self.clauses[0]
            verb = clause[0]
            self.kind_wanted = clause[1][1] if verb == "pickup" else None
            if verb == "pickup" and self.carrying is not None and self.last == PICKUP:
                held = self.carrying
                if self.matches_held(held, clause[1]):
                    self.next_clause()
                    continue
            if verb == "put" and self.last == DROP and self.carrying is None and self.put_holding:
                self.put_holding = False
                self.next_clause()
                continue
            if verb == "open" and self.last == TOGGLE:
                fx, fy = self.front()
                if self.kind[fx][fy] == DOOR and self.state[fx][fy] == 0 and self.matches((fx, fy), clause[1]):
                    self.next_clause()
                    continue
            if verb == "goto" and self.last == DONE:
                self.next_clause()
                continue
            return self.pursue(clause)

    def clear(self) -> int:
        """Move the blocker at ``self.clearing`` out of the way: pick it up, then drop it off the doorway."""
        cell = self.clearing
        assert cell is not None
        if self.carrying is not None and self.last == PICKUP:
            self.clearing = None
            return self.drop_aside(avoid=cell)
        near = abs(cell[0] - self.pos[0]) + abs(cell[1] - self.pos[1]) == 1
        if self.carrying is None and self.kind[cell[0]][cell[1]] in (KEY, BALL, BOX) and near:
            turn = self.face(cell)
            return PICKUP if turn is None else turn
        self.clearing = None
        return self.decide()

    def next_clause(self) -> None:
        """The current clause is done; the action that completed it must not complete the next one too."""
        assert self.clauses
        self.clauses.pop(0)
        self.last = None

    def matches_held(self, held: tuple[int, int], desc: Desc) -> bool:
        colour, kind, _loc = desc
        return (kind is None or held[0] == kind) and (colour is None or held[1] == colour)

    put_holding = False
    dropping = False
    drop_tries = 0
    clearing: Cell | None = None
    moved_from: Cell | None = None
    kind_wanted: int | None = None

    def pursue(self, clause: Clause) -> int:
        verb = clause[0]
        blockers = verb not in ("goal", "memory", "explore")
        if verb == "explore":
            return self.unblock([], False)
        if verb == "goal":
            goals = self.cells(lambda x, y: self.kind[x][y] == GOAL)
            action = self.route(goals, unknown=False)
            if action is None:
                action = self.route(goals, unknown=True)
            if action == ARRIVED:
                return FORWARD
            return action if action is not None else self.unblock(goals, False)
        if verb == "memory":
            # the two objects at the hallway's end share a column, four cells apart; the third one is the cue
            objects = self.cells(lambda x, y: self.kind[x][y] in (KEY, BALL))
            pair = [c for c in objects if any(d[0] == c[0] and abs(d[1] - c[1]) == 4 for d in objects)]
            cues = [c for c in objects if c not in pair]
            if pair and cues:
                cue_kind = self.kind[cues[0][0]][cues[0][1]]
                action = self.route([c for c in pair if self.kind[c[0]][c[1]] == cue_kind], unknown=False)
                if action == ARRIVED:
                    return DONE
                if action is not None:
                    return action
            return self.unblock([], False)
        if verb == "goto":
            targets = self.found(clause[1])
            action = self.route(targets, unknown=True)
            if action == ARRIVED:
                return DONE
            return action if action is not None else self.unblock(targets, blockers)
        if verb == "open":
            doors = [c for c in self.found(clause[1]) if self.state[c[0]][c[1]] > 0]
            for x, y in doors:
                key = (KEY, self.colour[x][y])
                if self.state[x][y] == 2 and self.carrying != key:
                    keys = [
                        c for c in self.cells(lambda a, b: self.kind[a][b] == KEY) if self.colour[c[0]][c[1]] == key[1]
                    ]
                    action = self.pick(keys)
                    if action is not None:
                        return action
            openable = [
                c for c in doors if self.state[c[0]][c[1]] == 1 or self.carrying == (KEY, self.colour[c[0]][c[1]])
            ]
            action = self.route(openable, unknown=True)
            if action == ARRIVED:
                return TOGGLE
            return action if action is not None else self.unblock(doors, blockers)
        if verb == "pickup" or (verb == "put" and not (self.carrying and self.matches_held(self.carrying, clause[1]))):
            targets = self.found(clause[1])
            action = self.pick(targets)
            return action if action is not None else self.unblock(targets, blockers)
        # put, holding the object: drop it on an empty cell next to the other one
        self.put_holding = True
        anchors = self.found(clause[2])
        spots = {
            (x + dx, y + dy)
            for x, y in anchors
            for dx, dy in DIRS
            if self.kind[x + dx][y + dy] == EMPTY and (x + dx, y + dy) != self.pos
        }
        action = self.route(spots, unknown=True)
        if action == ARRIVED:
            return DROP
        return action if action is not None else self.unblock(list(spots), blockers)


def make_policy(context: Any) -> Any:
    rng = random.Random(context.policy_seed)

    class Policy:
        def __init__(self) -> None:
            self.agent = Agent(rng)

        def act(self, observation: Any) -> int:
            return self.agent.act(observation)

    return Policy()
