"""Heuristic Policy of ``retro/airstriker``: fire in bursts, dodge the green shots, line up under an enemy.

It reads the RGB screen (uint8 [224, 320, 3]) each step:

* the player's ship is the light grey-white shape in the bottom band (rows 170-215); its column is where most of
  those light pixels are;
* enemy shots are bright green pixels; one within ``DANGER_ROWS`` above the ship and ``DANGER_COLUMNS`` to either
  side makes the ship step away from it;
* otherwise the ship moves under the nearest enemy (bright red pixels) so that its own shots hit;
* B fires a shot only when pressed anew, so it is pressed every other step and released in between.

The action is the upstream MultiBinary(12) button vector, in ``context.metadata["buttons"]`` order.
"""

from typing import Any

import numpy as np

BUTTONS = ("B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z")
SHIP_ROWS = (170, 216)
DANGER_ROWS = 70
DANGER_COLUMNS = 18
ALIGNED = 4
BLOCK = 8
ENEMY_PIXELS = 12


def _enemy_blocks(screen: Any) -> Any:
    """8x8 blocks holding at least ENEMY_PIXELS bright red pixels (an enemy ship; the ship's own shots are dots)."""
    red = (screen[..., 0] > 150) & (screen[..., 1] < 80) & (screen[..., 2] < 80)
    height, width = red.shape[0] // BLOCK * BLOCK, red.shape[1] // BLOCK * BLOCK
    blocks = red[:height, :width].reshape(height // BLOCK, BLOCK, width // BLOCK, BLOCK).sum(axis=(1, 3))
    blocks[: 24 // BLOCK] = 0  # the status line
    return blocks >= ENEMY_PIXELS


def _column(mask: Any) -> float | None:
    columns = np.nonzero(mask.any(axis=0))[0]
    if columns.size == 0:
        return None
    counts = mask.sum(axis=0).astype(float)
    window = np.convolve(counts, np.ones(21), mode="same")
    return float(np.argmax(window))


class Striker:
    def __init__(self, buttons: tuple[str, ...]) -> None:
        self._index = {name: i for i, name in enumerate(buttons)}
        self._t = 0
        self._x = 160.0

    def _press(self, *names: str) -> list[int]:
        action = [0] * len(self._index)
        for name in names:
            action[self._index[name]] = 1
        return action

    def act(self, observation: Any) -> list[int]:
        screen = np.asarray(observation, dtype=np.int16)
        self._t += 1
        fire = ("B",) if self._t % 2 == 0 else ()
        if screen.ndim != 3:
            return self._press(*fire)
        top, bottom = SHIP_ROWS
        band = screen[top:bottom]
        light = (band.min(axis=-1) > 150) & (np.abs(band[..., 0] - band[..., 2]) < 40)
        x = _column(light)
        if x is not None:
            self._x = x
        green = (screen[..., 1] > 150) & (screen[..., 0] < 100) & (screen[..., 2] < 100)
        enemies = _enemy_blocks(screen[: top - top % BLOCK])  # above the ship, whose engines are red too
        _, columns = np.nonzero(green[max(0, top - DANGER_ROWS) : bottom])
        enemy_rows, enemy_columns = np.nonzero(enemies)
        low = enemy_rows * BLOCK + BLOCK // 2 >= top - DANGER_ROWS
        threats = np.concatenate([columns, enemy_columns[low] * BLOCK + BLOCK // 2]).astype(float)
        near = np.abs(threats - self._x) < DANGER_COLUMNS
        if near.any():
            threat = float(threats[near].mean())
            left = threat >= self._x  # step away from it, unless at the edge of the screen
            away = ("LEFT" if self._x > 30 else "RIGHT") if left else ("RIGHT" if self._x < 290 else "LEFT")
            return self._press(away, *fire)
        if enemy_columns.size:
            centres = enemy_columns * BLOCK + BLOCK // 2
            target = float(centres[np.argmin(np.abs(centres - self._x))])
            if target > self._x + ALIGNED:
                return self._press("RIGHT", *fire)
            if target < self._x - ALIGNED:
                return self._press("LEFT", *fire)
        return self._press(*fire)


def make_policy(context: Any) -> Any:
    metadata = getattr(context, "metadata", None) or {}
    return Striker(tuple(metadata.get("buttons", BUTTONS)))
