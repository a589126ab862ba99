"""Crafter (crafter 1.8.3) as a gymnasium environment: ``CrafterEnv``, the world the ``crafter/*`` Benchmarks step.

``crafter.Env`` is not a gymnasium environment (no spaces of gymnasium's, ``reset()`` without a seed, a 4-tuple
``step``). :class:`CrafterEnv` wraps it: ``reset(seed=...)`` builds a fresh ``crafter.Env(area=(64, 64),
view=(9, 9), size=(64, 64), reward=True, length=..., seed=seed)``, so the world, its creatures and every later
random draw follow from the Episode seed alone; ``step`` returns gymnasium's 5-tuple (death terminates, the step
limit truncates); ``render()`` with ``render_mode="rgb_array"`` returns the frame (never seen by the Policy unless
it is the observation).

Two observations:

* ``rgb``: crafter's own uint8 image ``[64, 64, 3]`` (the 9x7 local view above a 9x2 inventory strip);
* ``local-symbolic``: a dict read from the same world: ``terrain`` uint8 ``[7, 9]`` (codes in
  :data:`TERRAIN_CODES`, 0 = outside the world), ``entities`` uint8 ``[7, 9]`` (:data:`ENTITY_CODES`), the player
  at row 3, column 4 (rows run down = ``move_down``, columns right = ``move_right``); ``inventory`` a dict of the
  16 counters (0..9); ``facing`` 0 left, 1 right, 2 up, 3 down; ``sleeping`` 0/1; ``daylight`` float32 in [0, 1].

crafter 1.8.3 keeps each world chunk's creatures in a set ordered by memory address and despawns one picked by
index from it, so an Episode would depend on what the process ran before; the wrapper gives every world
insertion-ordered chunks, which makes an Episode a function of its seed and actions (``replay --execute``
reproduces it).

After each step, :attr:`CrafterEnv.facts` holds cumulative Episode facts (vitals, the achievements unlocked so far
as a bit mask over :data:`ACHIEVEMENTS`, action counts, the likely cause of a death) for Feedback.

Two reward profiles: ``achievement-score`` (crafter's own reward) and ``long-horizon-survival``, whose reward is
the credit of :mod:`evoledger.benchmarks.crafter_survival` (the facts then also hold its survival and secondary
parts so far and, at the end, mean vitals by age band).

This module imports ``crafter`` only when an environment is created; register it with :func:`register`.
"""

from __future__ import annotations

import collections
import importlib
from typing import Any, Final

import gymnasium as gym
import numpy as np
from evoledger.benchmarks.crafter_survival import SurvivalCredit
from gymnasium import spaces

__all__ = [
    "ACHIEVEMENTS",
    "ACTIONS",
    "AGE_BANDS",
    "DEATH_CAUSES",
    "ENTITY_CODES",
    "GYMNASIUM_ID",
    "INVENTORY",
    "PROFILES",
    "TERRAIN_CODES",
    "CrafterEnv",
    "register",
]

GYMNASIUM_ID: Final = "evoledger/Crafter-v1"

ACTIONS: Final = (
    "noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep", "place_stone", "place_table",
    "place_furnace", "place_plant", "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe",
    "make_wood_sword", "make_stone_sword", "make_iron_sword",
)  # fmt: skip
ACHIEVEMENTS: Final = (
    "collect_coal", "collect_diamond", "collect_drink", "collect_iron", "collect_sapling", "collect_stone",
    "collect_wood", "defeat_skeleton", "defeat_zombie", "eat_cow", "eat_plant", "make_iron_pickaxe",
    "make_iron_sword", "make_stone_pickaxe", "make_stone_sword", "make_wood_pickaxe", "make_wood_sword",
    "place_furnace", "place_plant", "place_stone", "place_table", "wake_up",
)  # fmt: skip
INVENTORY: Final = (
    "health", "food", "drink", "energy", "sapling", "wood", "stone", "coal", "iron", "diamond", "wood_pickaxe",
    "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword",
)  # fmt: skip
TERRAIN_CODES: Final = (
    "unknown", "water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron", "diamond", "table", "furnace",
)  # fmt: skip
ENTITY_CODES: Final = (
    "none", "player", "cow", "zombie", "skeleton", "arrow_left", "arrow_right", "arrow_up", "arrow_down",
    "plant_young", "plant_ripe", "fence",
)  # fmt: skip
PROFILES: Final = ("achievement-score", "long-horizon-survival")
"""The reward profiles: crafter's own reward, or the long-horizon-survival credit."""
AGE_BANDS: Final = ((0, 100), (100, 250), (250, 500), (500, 1000), (1000, None))
"""Age bands (steps, upper bound excluded) of the long-horizon-survival profile's mean vitals."""
_VITALS: Final = ("health", "food", "drink", "energy")
DEATH_CAUSES: Final = ("none", "lava", "zombie", "arrow", "starvation", "thirst", "exhaustion", "unknown")
"""The ``death_cause`` fact: an index into this tuple (the likely cause, judged from the last step)."""

VIEW_ROWS: Final = 7
VIEW_COLUMNS: Final = 9
PLAYER_ROW: Final = 3
PLAYER_COLUMN: Final = 4
_FACING: Final[dict[tuple[int, ...], int]] = {(-1, 0): 0, (1, 0): 1, (0, -1): 2, (0, 1): 3}
_TERRAIN: Final = {name: code for code, name in enumerate(TERRAIN_CODES)}
_REVERSE: Final = {1: 2, 2: 1, 3: 4, 4: 3}


def symbolic_space() -> spaces.Dict:
    """The ``local-symbolic`` observation space."""
    return spaces.Dict(
        {
            "terrain": spaces.Box(0, len(TERRAIN_CODES) - 1, (VIEW_ROWS, VIEW_COLUMNS), np.uint8),
            "entities": spaces.Box(0, len(ENTITY_CODES) - 1, (VIEW_ROWS, VIEW_COLUMNS), np.uint8),
            "inventory": spaces.Dict({name: spaces.Discrete(10) for name in INVENTORY}),
            "facing": spaces.Discrete(4),
            "sleeping": spaces.Discrete(2),
            "daylight": spaces.Box(0.0, 1.0, (), np.float32),
        }
    )


class CrafterEnv(gym.Env[Any, Any]):
    """A gymnasium environment around ``crafter.Env`` (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        observation: str = "rgb",
        length: int = 10_000,
        render_mode: str | None = None,
        profile: str = "achievement-score",
    ) -> None:
        if observation not in ("rgb", "local-symbolic"):
            raise ValueError(f"observation {observation!r} is not 'rgb' or 'local-symbolic'")
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
        self._profile = profile
        self._credit = SurvivalCredit()
        self._bands: list[list[float]] = []
        self._t = 0
        self._observation = observation
        self._length = length
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 255, (64, 64, 3), np.uint8) if observation == "rgb" else symbolic_space()
        self.action_space = spaces.Discrete(len(ACTIONS))
        self._env: Any = None
        self._frame: Any = None
        self.facts: dict[str, float] = {}
        self._unlocked = 0
        self._actions = [0] * len(ACTIONS)
        self._reversals = 0
        self._last_move = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        crafter = importlib.import_module("crafter")
        world_seed = seed if seed is not None else int(self.np_random.integers(2**63))
        self._env = crafter.Env(
            area=(64, 64), view=(9, 9), size=(64, 64), reward=True, length=self._length, seed=world_seed
        )
        _order_chunks(self._env._world)
        self._frame = self._env.reset()
        self._unlocked, self._actions, self._reversals, self._last_move = 0, [0] * len(ACTIONS), 0, 0
        self._credit, self._bands, self._t = SurvivalCredit(), [[0.0] * 5 for _ in AGE_BANDS], 0
        self.facts = {}
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._env is None:
            raise RuntimeError("step() before reset()")
        index = int(action)
        health_before = self._env._player.health
        self._frame, reward, done, info = self._env.step(index)
        player = self._env._player
        terminated = player.health <= 0
        truncated = bool(done) and not terminated
        self._count(index)
        for i, name in enumerate(ACHIEVEMENTS):
            if info["achievements"].get(name, 0) > 0:
                self._unlocked |= 1 << i
        inventory = info["inventory"]
        self.facts = {
            "health": float(inventory["health"]),
            "food": float(inventory["food"]),
            "drink": float(inventory["drink"]),
            "energy": float(inventory["energy"]),
            "achievements": float(bin(self._unlocked).count("1")),
            "achievements_mask": float(self._unlocked),
        }
        if self._profile == "long-horizon-survival":
            reward = self._survival_step(info, alive=not terminated, ended=terminated or truncated)
        if terminated or truncated:
            self.facts["reversals"] = float(self._reversals)
            self.facts.update({f"action_{name}": float(n) for name, n in zip(ACTIONS, self._actions, strict=True)})
            cause = self._death_cause(health_before) if terminated else "none"
            self.facts["death_cause"] = float(DEATH_CAUSES.index(cause))
        return self._observe(), float(reward), terminated, truncated, info

    def render(self) -> Any:
        if self.render_mode != "rgb_array" or self._frame is None:
            return None
        # the frame crafter drew for this step: drawing another would draw night noise from the world's random
        # state and so change the rest of the Episode
        return np.array(self._frame, dtype=np.uint8)

    def close(self) -> None:
        self._env = None

    # -----------------------------------------------------------------------------------------------------------

    def _survival_step(self, info: dict[str, Any], *, alive: bool, ended: bool) -> float:
        """The long-horizon-survival reward of this step; adds that profile's facts."""
        self._t += 1
        inventory = info["inventory"]
        reward = self._credit.step(self._t, info["achievements"], inventory, alive)
        band = next(i for i, (low, high) in enumerate(AGE_BANDS) if high is None or self._t <= high)
        sums = self._bands[band]
        for i, vital in enumerate(_VITALS):
            sums[i] += float(inventory[vital])
        sums[4] += 1.0
        self.facts["lhs_survival"] = round(self._credit.survival, 9)
        self.facts["lhs_secondary"] = round(self._credit.secondary, 9)
        if ended:
            self.facts["lhs_unlocks"] = round(self._credit.unlocks, 9)
            self.facts["lhs_repeats"] = round(self._credit.repeats, 9)
            self.facts["lhs_maintenance"] = round(self._credit.maintenance, 9)
            for (low, _), sums in zip(AGE_BANDS, self._bands, strict=True):
                if sums[4]:
                    for i, vital in enumerate(_VITALS):
                        self.facts[f"band_{low}_{vital}"] = round(sums[i] / sums[4], 4)
        return reward

    def _count(self, action: int) -> None:
        self._actions[action] += 1
        if action in _REVERSE:
            if self._last_move == _REVERSE[action]:
                self._reversals += 1
            self._last_move = action

    def _death_cause(self, health_before: float) -> str:
        player = self._env._player
        world = self._env._world
        if world[player.pos][0] == "lava":
            return "lava"
        near = [type(obj).__name__ for obj in world.objects if obj is not player and player.distance(obj) <= 1]
        if "Zombie" in near:
            return "zombie"
        if "Arrow" in near:
            return "arrow"
        inventory = player.inventory
        for vital, cause in (("food", "starvation"), ("drink", "thirst"), ("energy", "exhaustion")):
            if inventory[vital] <= 0:
                return cause
        return "unknown"

    def _observe(self) -> Any:
        if self._observation == "rgb":
            return np.asarray(self._frame, dtype=np.uint8)
        return self._symbolic()

    def _symbolic(self) -> dict[str, Any]:
        env = self._env
        player, world = env._player, env._world
        terrain = np.zeros((VIEW_ROWS, VIEW_COLUMNS), np.uint8)
        entities = np.zeros((VIEW_ROWS, VIEW_COLUMNS), np.uint8)
        px, py = int(player.pos[0]), int(player.pos[1])
        for row in range(VIEW_ROWS):
            for column in range(VIEW_COLUMNS):
                x, y = px + column - PLAYER_COLUMN, py + row - PLAYER_ROW
                material, obj = world[(x, y)]
                terrain[row, column] = _TERRAIN.get(material, 0) if material is not None else 0
                entities[row, column] = _entity_code(obj)
        return {
            "terrain": terrain,
            "entities": entities,
            "inventory": {name: int(player.inventory[name]) for name in INVENTORY},
            "facing": _FACING.get(tuple(int(v) for v in player.facing), 3),
            "sleeping": int(bool(player.sleeping)),
            "daylight": np.asarray(np.clip(world.daylight, 0.0, 1.0), dtype=np.float32),
        }


class _InsertionOrderedSet:
    """The part of ``set`` crafter uses for a chunk's objects, iterating in insertion order.

    crafter keeps each chunk's creatures in a plain set, whose order follows the objects' ids (memory addresses),
    and despawns the creature at a random index of that order: the same seed would then play differently
    depending on what the process allocated before.
    """

    def __init__(self) -> None:
        self._items: dict[Any, None] = {}

    def add(self, item: Any) -> None:
        self._items[item] = None

    def remove(self, item: Any) -> None:
        del self._items[item]

    def __iter__(self) -> Any:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: Any) -> bool:
        return item in self._items


def _order_chunks(world: Any) -> None:
    """Make ``world.reset()`` (which crafter's ``Env.reset()`` calls) keep chunks as insertion-ordered sets."""
    original = world.reset

    def reset(seed: Any = None) -> None:
        original(seed=seed)
        world._chunks = collections.defaultdict(_InsertionOrderedSet)

    world.reset = reset


def _entity_code(obj: Any) -> int:
    if obj is None:
        return 0
    kind = type(obj).__name__
    if kind == "Arrow":
        return 5 + _FACING.get(tuple(int(v) for v in obj.facing), 0)
    if kind == "Plant":
        return 10 if obj.ripe else 9
    return {"Player": 1, "Cow": 2, "Zombie": 3, "Skeleton": 4, "Fence": 11}.get(kind, 0)


def _make_env(**kwargs: Any) -> CrafterEnv:
    return CrafterEnv(**kwargs)


def register() -> None:
    """Register :data:`GYMNASIUM_ID` with gymnasium (once)."""
    if GYMNASIUM_ID not in gym.registry:
        gym.register(id=GYMNASIUM_ID, entry_point=_make_env, disable_env_checker=True)
