"""Reading a recorded NetHack observation in the Host, without ``nle``: bottom-line stats, messages, the map and
the top-ten entry that says how the game ended.

Everything here works on the plain values a trajectory records (numpy arrays in the worker, nested lists once
recorded), so the Host can explain an Episode (depth reached, experience level, death cause, the last messages)
while ``nle`` itself is installed only in the family's own environment. The indices follow NLE 1.3.0's
``nle.nethack.NLE_BL_*`` (tests/benchmarks/test_nethack_venv.py checks them inside that environment).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

__all__ = ["BLSTATS", "end_of_game", "in_game", "map_rows", "message_text", "named_stats"]

BLSTATS: Final = (
    "x", "y", "strength_percentage", "strength", "dexterity", "constitution", "intelligence", "wisdom", "charisma",
    "score", "hitpoints", "max_hitpoints", "depth", "gold", "energy", "max_energy", "armor_class", "monster_level",
    "experience_level", "experience_points", "time", "hunger_state", "carrying_capacity", "dungeon_number",
    "level_number", "condition", "alignment",
)  # fmt: skip
"""The 27 bottom-line stats (``blstats``), by index."""
HUNGER: Final = ("not_hungry", "hungry", "weak", "fainting", "fainted", "starved")
"""``hunger_state`` values 1.. (0 is satiated)."""
_TTY_COLUMNS: Final = 80
_ENTRY: Final = re.compile(r"Agent-\S+\s+(.*?)(?:\s+-?\s*\[\s*\d+\s*\]|$)")
"""The player's top-ten entry: the text after the name, up to the ``[max hp]`` column."""


def _array(value: Any, dtype: Any) -> np.ndarray[Any, Any] | None:
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return None


def _text(codes: Any) -> str:
    array = _array(codes, np.int64)
    if array is None or array.ndim != 1:
        return ""
    return bytes(int(c) & 0xFF for c in array).split(b"\0", 1)[0].decode("latin-1")


def message_text(observation: Any) -> str:
    """The message line of a NetHack observation (``message``, Latin-1), or ``""``."""
    if not isinstance(observation, Mapping):
        return ""
    return _text(observation.get("message")).strip()


def named_stats(observation: Any) -> dict[str, int]:
    """The bottom-line stats by name (:data:`BLSTATS`), or ``{}`` when the observation has none."""
    if not isinstance(observation, Mapping):
        return {}
    array = _array(observation.get("blstats"), np.int64)
    if array is None or array.shape != (len(BLSTATS),):
        return {}
    return {name: int(value) for name, value in zip(BLSTATS, array, strict=True)}


def in_game(stats: Mapping[str, int]) -> bool:
    """Whether stats come from a game in progress (NLE zeroes them on the final, top-ten screen)."""
    return any(stats.get(name, 0) for name in ("time", "max_hitpoints", "depth"))


def map_rows(observation: Any) -> list[str] | None:
    """The 21 x 79 map (``chars``) as 21 strings, or None."""
    if not isinstance(observation, Mapping):
        return None
    chars = _array(observation.get("chars"), np.int64)
    if chars is None or chars.shape != (21, 79):
        return None
    return [bytes(int(c) & 0xFF for c in row).decode("latin-1") for row in chars]


def _tty_text(observation: Any) -> str:
    """The terminal (``tty_chars``, 24 x 80) as one string: a full-width row continues on the next."""
    if not isinstance(observation, Mapping):
        return ""
    tty = _array(observation.get("tty_chars"), np.int64)
    if tty is None or tty.ndim != 2 or tty.shape[1] != _TTY_COLUMNS:
        return ""
    parts: list[str] = []
    for row in tty:
        line = bytes(int(c) & 0xFF for c in row).decode("latin-1")
        parts.append(line if len(line.rstrip()) == _TTY_COLUMNS else line.rstrip() + " ")
    return " ".join("".join(parts).split())


def end_of_game(observations: Sequence[Any]) -> str | None:
    """How the game ended, from the top-ten entry NetHack shows last (``"died in The Dungeons of Doom on level 2.
    Killed by a jackal."``), or None when no observation shows one."""
    for observation in reversed(observations[-3:]):
        found = _ENTRY.search(_tty_text(observation))
        if found and found.group(1):
            return found.group(1)[:300]
    return None
