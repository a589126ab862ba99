"""Toy Benchmarks with the observations and actions real environments bring: images, dicts, text, multi-spaces.

They exist for tests and the bench (``bench/image_stepping_bench.py``); like the other toy Benchmarks they are
small, fast and deterministic, and their targets derive from the Episode's Host seed only.

* ``toy/image``: each observation is a uint8 RGB image of shape ``(height, width, 3)`` (``--set height=96
  --set width=96``), black but for one bright vertical bar in one of ``columns`` equal columns; the action
  (``Discrete(columns)``) names the bar's column. Reward 1.0 for the right column, else 0.0; the bar moves every
  step; Episodes run ``max_episode_steps`` steps (``terminate_on_hit`` ends one at the first hit).
* ``toy/mixed``: a control panel set by a language mission. The observation is a ``Dict``: ``mission`` (``Text``,
  e.g. ``"dial 2 3 lamps 101 word cab nudge -1"``), ``lamps`` (``MultiBinary(3)``, the lamps now),
  ``dial`` (``MultiDiscrete([3, 4])``, the dial now), ``step`` (``Discrete``) and ``last`` (a ``Tuple`` of a
  ``Discrete(6)``, how many of the five parts the last action got right, and a float32 ``Box`` of shape (1,), the
  last reward). The action is a ``Dict`` too: ``dial`` (``MultiDiscrete([3, 4])``), ``lamps`` (``MultiBinary(3)``),
  ``word`` (``Text`` of 1 to 8 lowercase letters) and ``nudge`` (a ``Tuple`` of ``Discrete(3, start=-1)`` and an
  int64 ``Box(-2, 2, (1,))``). Each of the five parts that matches the mission (dial, lamps, word and each item of
  nudge) earns 0.2; all five right terminate the Episode.

Actions are checked strictly against the action space (:func:`~evoledger.benchmarks.gym_spaces.check_action`):
a wrong type, shape, key, length or value is :class:`~evoledger.kernel.authoring.InvalidAction`, never repaired.
Score: the mean Episode return, counting Episodes the Policy failed as 0; infra faults are left out.
"""

from __future__ import annotations

import string
from typing import Any, Final

import numpy as np
from evoledger.benchmarks.gym_spaces import check_action
from evoledger.benchmarks.toy import ToyBenchmark, ToyConfig, _ToyEnvironment
from evoledger.kernel.authoring import CatalogEntry, EpisodeSpec, Step
from gymnasium import spaces
from pydantic import Field

__all__ = ["BENCHMARKS", "CATALOG", "ToyImageConfig", "make_toy_image", "make_toy_mixed"]

_BAR: Final = 200
_WORD_CHARSET: Final = string.ascii_lowercase
_MISSION_CHARSET: Final = string.ascii_lowercase + string.digits + " -"
_DIAL: Final = (3, 4)
_LAMPS: Final = 3


class ToyImageConfig(ToyConfig):
    """``toy/image`` also takes the image size and the number of columns."""

    height: int = Field(default=64, ge=4, le=1024)
    width: int = Field(default=64, ge=4, le=1024)
    columns: int = Field(default=4, ge=2, le=16)


class _StrictEnvironment(_ToyEnvironment):
    """Checks every action with :func:`check_action` before the toy mechanics see it."""

    def step(self, action: Any) -> Step:
        return super().step(check_action(self._action_space, action))


class _ImageEnvironment(_StrictEnvironment):
    def __init__(self, benchmark: ToyBenchmark, episode: EpisodeSpec) -> None:
        super().__init__(benchmark, episode)
        self._shape: tuple[int, ...] = benchmark.observation_space.shape or ()
        self._columns = int(self._action_space.n)

    def _first(self) -> Any:
        self._hits = 0
        return self._image()

    def _image(self) -> np.ndarray[Any, Any]:
        self._target = int(self._rng.integers(0, self._columns))
        width = self._shape[1]
        left = self._target * width // self._columns
        right = (self._target + 1) * width // self._columns
        image = np.zeros(self._shape, dtype=np.uint8)
        image[:, left + (right - left) // 4 : right - (right - left) // 4, :] = _BAR
        return image

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        hit = int(action) == self._target
        self._hits += hit
        return self._image(), 1.0 if hit else 0.0, hit, {"hits": float(self._hits)}


class _MixedEnvironment(_StrictEnvironment):
    def _first(self) -> Any:
        rng = self._rng
        self._want_dial = np.array([rng.integers(0, n) for n in _DIAL], dtype=np.int64)
        self._want_lamps = rng.integers(0, 2, size=_LAMPS).astype(np.int8)
        self._want_word = "".join(rng.choice(list(_WORD_CHARSET), size=int(rng.integers(1, 9))))
        self._want_nudge = (int(rng.integers(-1, 2)), int(rng.integers(-2, 3)))
        self._mission = (
            f"dial {' '.join(str(int(v)) for v in self._want_dial)} "
            f"lamps {''.join(str(int(v)) for v in self._want_lamps)} word {self._want_word} "
            f"nudge {self._want_nudge[0]} {self._want_nudge[1]}"
        )
        self._dial = np.zeros(len(_DIAL), dtype=np.int64)
        self._lamps = np.zeros(_LAMPS, dtype=np.int8)
        return self._observation(0, 0.0)

    def _observation(self, right: int, reward: float) -> dict[str, Any]:
        return {  # in the space's key order (gymnasium sorts a Dict's keys), as the Policy receives any Dict
            "dial": self._dial.copy(),
            "lamps": self._lamps.copy(),
            "last": (right, np.array([reward], dtype=np.float32)),
            "mission": self._mission,
            "step": self._steps,
        }

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        self._dial, self._lamps = action["dial"].astype(np.int64), action["lamps"].astype(np.int8)
        nudge, amount = action["nudge"]
        parts = (
            bool(np.array_equal(self._dial, self._want_dial)),
            bool(np.array_equal(self._lamps, self._want_lamps)),
            action["word"] == self._want_word,
            nudge == self._want_nudge[0],
            int(amount[0]) == self._want_nudge[1],
        )
        right = sum(parts)
        reward = right / len(parts)
        return self._observation(right, reward), reward, right == len(parts), {"parts_right": float(right)}


def make_toy_image(**config: Any) -> ToyBenchmark:
    """``toy/image``: name the column of a bright bar in a uint8 RGB image (Discrete actions)."""
    parsed = ToyImageConfig(**config)
    return ToyBenchmark(
        "toy/image",
        f"Each observation is a {parsed.height}x{parsed.width} RGB image with one bright vertical bar; name the "
        f"column (of {parsed.columns}) it is in.",
        parsed,
        spaces.Box(0, 255, (parsed.height, parsed.width, 3), dtype=np.uint8),
        spaces.Discrete(parsed.columns),
        _ImageEnvironment,
    )


def make_toy_mixed(**config: Any) -> ToyBenchmark:
    """``toy/mixed``: set a control panel as a language mission says (Dict, Text, MultiDiscrete, MultiBinary, Tuple
    observations and actions)."""
    parsed = ToyConfig(**config)
    observation_space = spaces.Dict(
        {
            "mission": spaces.Text(max_length=64, min_length=0, charset=_MISSION_CHARSET),
            "lamps": spaces.MultiBinary(_LAMPS),
            "dial": spaces.MultiDiscrete(list(_DIAL)),
            "step": spaces.Discrete(parsed.max_episode_steps + 1),
            "last": spaces.Tuple((spaces.Discrete(6), spaces.Box(0.0, 1.0, (1,), dtype=np.float32))),
        }
    )
    action_space = spaces.Dict(
        {
            "dial": spaces.MultiDiscrete(list(_DIAL)),
            "lamps": spaces.MultiBinary(_LAMPS),
            "word": spaces.Text(max_length=8, min_length=1, charset=_WORD_CHARSET),
            "nudge": spaces.Tuple((spaces.Discrete(3, start=-1), spaces.Box(-2, 2, (1,), dtype=np.int64))),
        }
    )
    return ToyBenchmark(
        "toy/mixed",
        "Set a control panel (dial, lamps, a word, a nudge) as the text mission says; each part right earns 0.2.",
        parsed,
        observation_space,
        action_space,
        _MixedEnvironment,
    )


BENCHMARKS = {"toy/image": make_toy_image, "toy/mixed": make_toy_mixed}

CATALOG = (
    CatalogEntry("toy/image", "toy", "Toy: name the column of a bright bar in a uint8 RGB image (size configurable)."),
    CatalogEntry("toy/mixed", "toy", "Toy: set a control panel from a text mission (Dict, Text, Multi* and Tuple)."),
)
