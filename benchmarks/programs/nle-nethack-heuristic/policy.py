"""Heuristic Policy of ``nle/nethack-score``: answer prompts, fight what is adjacent, find the down stairs, descend.

Descending is what pays in NetHackScore: the in-game score gains 50 points for every new deepest level (plus
experience points for kills and the gold picked up), and dying costs nothing already earned. Each step it reads the
observation (``chars``: the 21 x 79 map NetHack remembers, ``colors``, ``blstats`` x/y/depth, ``message`` and
``tty_chars`` for prompts) and:

1. dismisses ``--More--`` (MORE), kicks a locked door it walked into (KICK, then the direction) and leaves other
   prompts (MORE);
2. when hungry, eats from its pack (EAT, then the food's letter, if it is one of the keys an action sends: the
   moves are ``hjklyubn``, runs ``HJKLYUBN``, EAT ``e``, SEARCH ``s``), declining corpses (``n``);
3. attacks an adjacent monster (a letter on the map) by moving into it;
4. stands on the down stairs ``>``: goes DOWN; sees them: walks the shortest path there;
5. otherwise walks to the nearest cell not yet stood on next to unexplored space, then to any cell not yet
   stood on, and at last searches (SEARCH) for hidden passages, with a random step now and then.

Paths avoid walls, boulders and traps, and never move diagonally into or out of a doorway, as NetHack forbids.
"""

import random
from collections import deque
from typing import Any

import numpy as np

MORE, UP, DOWN, WAIT, KICK, EAT, SEARCH = 0, 17, 18, 19, 20, 21, 22
MOVES = {(-1, 0): 1, (0, 1): 2, (1, 0): 3, (0, -1): 4, (-1, 1): 5, (1, 1): 6, (1, -1): 7, (-1, -1): 8}
"""(row change, column change) -> action index: N, E, S, W, NE, SE, SW, NW."""
YES, NO = 8, 6  # the NW key is 'y', the SE key 'n'
KEYS = {key: i for i, key in enumerate("\rkljhunbyKLJHUNBY<>.\x04es") if i}
"""The key each action sends (``\x04`` is KICK, Ctrl-D): an inventory letter among them can answer a prompt."""
HUNGRY = 1  # blstats hunger_state: 1 hungry, 2 weak, 3 fainting
WALKABLE = set(b'.#<>{}_%)[!?/="$*(')
DOOR_COLOUR = 3  # brown: an open or closed door (a wall is grey)
ROWS, COLUMNS = 21, 79


def _text(codes: Any) -> str:
    return bytes(int(c) for c in np.asarray(codes).reshape(-1)).split(b"\0", 1)[0].decode("latin-1")


class Explorer:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._visited: set[tuple[int, int]] = set()
        self._depth = -1
        self._stairs: tuple[int, int] | None = None
        self._stuck = 0
        self._last: tuple[int, int] | None = None
        self._move = 0
        self._kick: int | None = None
        self._ate = -10_000

    def act(self, observation: Any) -> int:
        action = self._act(observation)
        self._move = action if 1 <= action <= 8 else 0
        return action

    def _act(self, observation: Any) -> int:
        tty = "".join(_text(row) for row in observation["tty_chars"])
        message = _text(observation["message"])
        if "--More--" in tty:
            return MORE
        if "eat it?" in message or "eat one?" in message:
            return NO  # a corpse may be poisonous or worse: eat from the pack instead
        if "want to eat?" in message:
            return self._food(message)
        if "In what direction?" in message and self._kick is not None:
            direction, self._kick = self._kick, None
            return direction
        if "This door is locked" in message and self._move:
            self._kick = self._move
            return KICK
        if message.rstrip().endswith(("?", "]", ":")) or "[yn" in message:
            return MORE
        stats = np.asarray(observation["blstats"])
        column, row, depth = int(stats[0]), int(stats[1]), int(stats[12])
        if int(stats[21]) >= HUNGRY and int(stats[20]) - self._ate > 50:
            self._ate = int(stats[20])
            return EAT
        if depth != self._depth:
            self._depth, self._visited, self._stairs = depth, set(), None
        here = (row, column)
        self._stuck = self._stuck + 1 if here == self._last else 0
        self._last = here
        self._visited.add(here)
        chars = np.asarray(observation["chars"])
        colors = np.asarray(observation["colors"])
        for (dr, dc), action in MOVES.items():
            r, c = row + dr, column + dc
            if not (0 <= r < ROWS and 0 <= c < COLUMNS and chr(int(chars[r, c])).isalpha()):
                continue
            if not (dr and dc and (self._door(chars, colors, here) or self._door(chars, colors, (r, c)))):
                return action
        stairs = np.argwhere(chars == ord(">"))
        if len(stairs):
            self._stairs = (int(stairs[0][0]), int(stairs[0][1]))
        if self._stairs == here:
            return DOWN
        if self._stuck > 6 and self._rng.random() < 0.5:
            return self._rng.choice(list(MOVES.values()))
        step = None
        if self._stairs is not None:
            step = self._path(chars, colors, here, lambda p: p == self._stairs)
        if step is None:
            step = self._path(chars, colors, here, lambda p: p not in self._visited and self._frontier(chars, p))
        if step is None:
            step = self._path(chars, colors, here, lambda p: p not in self._visited)
        if step is None:
            return SEARCH if self._rng.random() < 0.8 else self._rng.choice(list(MOVES.values()))
        return step

    def _food(self, message: str) -> int:
        """The action whose key is one of the letters the eat prompt offers (``[fg or ?*]``), or MORE (cancel)."""
        offered = message[message.rfind("[") + 1 :].split(" or ")[0]
        letters = []
        for i, ch in enumerate(offered):
            if ch == "-" and 0 < i < len(offered) - 1:  # a range such as f-h
                letters += [chr(c) for c in range(ord(offered[i - 1]) + 1, ord(offered[i + 1]))]
            elif ch.isalpha():
                letters.append(ch)
        return next((KEYS[ch] for ch in letters if ch in KEYS), MORE)

    def _door(self, chars: Any, colors: Any, cell: tuple[int, int]) -> bool:
        r, c = cell
        glyph = int(chars[r, c])
        return glyph == ord("+") or (glyph in (ord("|"), ord("-")) and int(colors[r, c]) == DOOR_COLOUR)

    def _walkable(self, chars: Any, colors: Any, cell: tuple[int, int]) -> bool:
        r, c = cell
        glyph = int(chars[r, c])
        return glyph in WALKABLE or chr(glyph).isalpha() or self._door(chars, colors, cell)

    def _frontier(self, chars: Any, cell: tuple[int, int]) -> bool:
        r, c = cell
        window = chars[max(0, r - 1) : r + 2, max(0, c - 1) : c + 2]
        return bool((window == ord(" ")).any())

    def _path(self, chars: Any, colors: Any, start: tuple[int, int], goal: Any) -> int | None:
        """The first move of a shortest path from ``start`` to a walkable cell where ``goal(cell)``, or None."""
        first: dict[tuple[int, int], int | None] = {start: None}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            if cell != start and goal(cell):
                return first[cell]
            door = self._door(chars, colors, cell)
            for (dr, dc), action in MOVES.items():
                nxt = (cell[0] + dr, cell[1] + dc)
                if nxt in first or not (0 <= nxt[0] < ROWS and 0 <= nxt[1] < COLUMNS):
                    continue
                if not self._walkable(chars, colors, nxt):
                    continue
                if dr and dc and (door or self._door(chars, colors, nxt)):
                    continue
                first[nxt] = action if cell == start else first[cell]
                queue.append(nxt)
        return None


def make_policy(context: Any) -> Any:
    return Explorer(getattr(context, "policy_seed", 0))
