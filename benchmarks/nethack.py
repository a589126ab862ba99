"""NetHack (the NetHack Learning Environment's ``NetHackScore-v0``) as the Benchmark ``nle/nethack-score``.

An own-environment family: ``nle`` 1.3.0 pins gymnasium 1.2.0 while the main environment has a newer one, so its
Environments run in workers started from the family's venv (``evoledger env install nle``) while the Host (CLI,
ledger, Agent, Feedback, scoring) stays in the main environment. This module therefore never imports ``nle`` at
module level nor in the factory: the spec, the spaces (a static table, checked against NLE inside the venv by
tests/benchmarks/test_nethack_venv.py), the Episodes and the Feedback are built in the Host; only
:meth:`NetHackBenchmark._make_gym_env`, called by the worker's ``make_environment()``, imports it.

The Environment is NLE's ``NetHackScore-v0`` as upstream registers it: a neutral human male Monk
(``mon-hum-neu-mal``), the 23 task actions, reward = score gained minus 0.01 for each step that leaves the game
unchanged (a "frozen" step: a menu, a prompt, walking into a wall), at most 5,000 steps; monsters spawn, nothing is
saved or rendered. Two settings make it reproducible, as a Benchmark must be: NetHack's three RNGs (core, disp and
level generation) are seeded from the Episode's seed, with the anti-TAS reseeding off, and the moon phase and
Friday 13th are fixed (``fix_moon_phase``). ``replay --execute`` therefore reproduces every Episode.

**Observation** (a dict; the NLE keys, their shapes and dtypes in :data:`OBSERVATION_SPACES`): ``glyphs``,
``chars`` and ``colors`` of the 21 x 79 map, ``blstats`` (27 bottom-line stats: x, y, strength, ..., score,
hitpoints, depth, gold, ..., experience level, time, hunger state, ...; names in ``context.metadata["blstats"]``),
``message`` (the message line, Latin-1 codes, 0-terminated), the inventory (``inv_glyphs``, ``inv_letters``,
``inv_oclasses``, ``inv_strs``) and the terminal (``tty_chars`` 24 x 80, ``tty_cursor``) for prompts and menus.
NLE's ``screen_descriptions`` (133 KB a step) and colour/special layers of the terminal are left out.

**Action**: ``Discrete(23)``: 0 MORE (Enter: dismiss ``--More--``), 1-8 one step N, E, S, W, NE, SE, SW, NW, 9-16
run in those directions, 17 UP (``<``), 18 DOWN (``>``), 19 WAIT, 20 KICK (then a direction), 21 EAT (then an
inventory letter), 22 SEARCH. Names in ``context.metadata["actions"]``.

**Score** (``mean_return``, maximize): the mean Episode return (in-game score gained, less the frozen-step
penalty); an Episode the Policy failed counts as ``-max_episode_steps`` (-5,000 at the default, below anything a
running Policy can get: the penalty is at most 0.01 a step); infra faults are left out.

**Feedback** adds to the shared summary: outcomes ``died`` / ``timed_out`` (and ``ascended``, ``quit``,
``escaped`` if ever); per-Episode notes ``max_depth``, ``max_experience_level``, ``game_score`` (the in-game score
at the end), ``turns`` (game time), ``gold``, ``frozen_step_share`` and ``starved``; ``deaths`` (per Episode, the
top-ten line: "died in The Dungeons of Doom on level 2. Killed by a jackal.") and ``last_messages`` (the last
messages before the end, with their steps); step metrics ``depth``, ``experience_level``, ``hitpoints``,
``game_score``; and ``trace.jsonl`` shows each step as its message, named stats and the map as 21 strings.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.feedback_summary import summarize_episodes
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.nethack_screen import (
    BLSTATS,
    end_of_game,
    in_game,
    map_rows,
    message_text,
    named_stats,
)
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, Extra, Feedback, OwnEnvironment
from gymnasium import spaces
from pydantic import Field

__all__ = [
    "ACTIONS",
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "NLE_VERSION",
    "OBSERVATION_SPACES",
    "NetHackBenchmark",
    "NetHackConfig",
    "observation_space",
]

NLE_VERSION: Final = "1.3.0"
GYMNASIUM_VERSION: Final = "1.2.0"
"""The gymnasium nle 1.3.0 pins, in the family's venv (recorded in the spec whatever the Host runs)."""
EXTRA: Final = Extra(
    "nle",
    ("nle",),
    own_environment=OwnEnvironment(
        requirements=(f"nle=={NLE_VERSION}", f"gymnasium=={GYMNASIUM_VERSION}"),
        reason=f"nle {NLE_VERSION} pins gymnasium {GYMNASIUM_VERSION}; the main environment has a newer gymnasium",
    ),
)
"""The family ``nle/nethack-score`` belongs to: installed by ``evoledger env install nle``."""

GYMNASIUM_ID: Final = "NetHackScore-v0"
HORIZON: Final = 5_000
"""NLE's step limit, also the largest ``max_episode_steps``."""
CHARACTER: Final = "mon-hum-neu-mal"
ACTIONS: Final = (
    "more", "north", "east", "south", "west", "northeast", "southeast", "southwest", "northwest",
    "far_north", "far_east", "far_south", "far_west", "far_northeast", "far_southeast", "far_southwest",
    "far_northwest", "up", "down", "wait", "kick", "eat", "search",
)  # fmt: skip
"""NetHackScore's 23 task actions, by action index."""
_INT32: Final = (-(2**31), 2**31 - 1)
OBSERVATION_SPACES: Final[Mapping[str, tuple[tuple[int, ...], str, int, int]]] = {
    "blstats": ((27,), "int64", *_INT32),
    "chars": ((21, 79), "uint8", 0, 255),
    "colors": ((21, 79), "uint8", 0, 15),
    "glyphs": ((21, 79), "int16", 0, 5976),
    "inv_glyphs": ((55,), "int16", 0, 5976),
    "inv_letters": ((55,), "uint8", 0, 127),
    "inv_oclasses": ((55,), "uint8", 0, 18),
    "inv_strs": ((55, 80), "uint8", 0, 255),
    "message": ((256,), "uint8", 0, 255),
    "tty_chars": ((24, 80), "uint8", 0, 255),
    "tty_cursor": ((2,), "uint8", 0, 255),
}
"""NLE 1.3.0's spaces of the observation keys used (shape, dtype, low, high), as ``gym.make`` builds them."""
_SEED_DOMAIN: Final = b"evoledger-nle/upstream-seeds/v1\0"
_FROZEN_PENALTY: Final = -0.01
_LAST_MESSAGES: Final = 8
_EXPLAINED_EPISODES: Final = 32


class NetHackConfig(GymConfig):
    """``nle/nethack-score`` settings (``--set``)."""

    max_episode_steps: int | None = Field(
        default=None, ge=1, le=HORIZON, description=f"Truncate Episodes after this many steps (default {HORIZON})."
    )


def observation_space() -> spaces.Dict:
    """The observation space, from :data:`OBSERVATION_SPACES` (no ``nle`` import)."""
    return spaces.Dict(
        {
            key: spaces.Box(low=low, high=high, shape=shape, dtype=np.dtype(dtype))
            for key, (shape, dtype, low, high) in OBSERVATION_SPACES.items()
        }
    )


def _nethack_seeds(seed: int) -> tuple[int, int, int]:
    """NetHack's core, disp and level-generation seeds for an Episode seed (63 bits each)."""
    values = []
    for label in (b"core", b"disp", b"lgen"):
        digest = hashlib.sha256(_SEED_DOMAIN + label + b"\0" + (seed % 2**64).to_bytes(8, "big")).digest()
        values.append(int.from_bytes(digest[:8], "big") & (2**63 - 1))
    return values[0], values[1], values[2]


class NetHackBenchmark(GymBenchmark):
    """``nle/nethack-score``: built in the Host without ``nle``; see the module docstring."""

    def _spaces(self) -> tuple[spaces.Space[Any], spaces.Space[Any]]:
        return observation_space(), spaces.Discrete(len(ACTIONS))

    def _make_gym_env(self, **overrides: Any) -> Any:
        import gymnasium as gym
        from nle.env.tasks import NetHackScore  # what NetHackScore-v0 registers, without keyword arguments

        steps = self.task.max_episode_steps
        env = NetHackScore(
            observation_keys=tuple(OBSERVATION_SPACES),
            character=CHARACTER,
            max_episode_steps=steps + 1,  # NLE's own limit ends a game as terminated: the TimeLimit truncates first
            fix_moon_phase=True,
            **overrides,
        )
        return _Seeded(gym.wrappers.TimeLimit(env, max_episode_steps=steps))

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals["stats"] = {}

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        stats = named_stats(step.observation)
        if in_game(stats):
            step.totals["stats"] = stats
        stats = step.totals["stats"]  # the final (top-ten) screen repeats the last stats of the game
        return {
            "depth": float(stats.get("depth", 0)),
            "experience_level": float(stats.get("experience_level", 0)),
            "hitpoints": float(stats.get("hitpoints", 0)),
            "game_score": float(stats.get("score", 0)),
        }

    def outcome(self, record: EpisodeRecord) -> str:
        if not record.terminated:
            return "timed_out"
        ending = end_of_game(record.trajectory.observations) if record.trajectory is not None else None
        for word in ("ascended", "quit", "escaped"):
            if ending is not None and ending.startswith(word):
                return word
        return "died"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        notes: dict[str, float] = {}
        trajectory = record.trajectory
        if trajectory is None:
            return notes
        if trajectory.metrics:
            notes["max_depth"] = max(float(m.get("depth", 0.0)) for m in trajectory.metrics)
            notes["max_experience_level"] = max(float(m.get("experience_level", 0.0)) for m in trajectory.metrics)
            notes["game_score"] = float(trajectory.metrics[-1].get("game_score", 0.0))
        last = next((s for s in map(named_stats, reversed(trajectory.observations)) if in_game(s)), {})
        if last:
            notes["turns"] = float(last["time"])
            notes["gold"] = float(last["gold"])
        if trajectory.rewards:
            frozen = sum(1 for r in trajectory.rewards if abs(r - _FROZEN_PENALTY) < 1e-9)
            notes["frozen_step_share"] = frozen / len(trajectory.rewards)
        ending = end_of_game(trajectory.observations) if record.terminated else None
        notes["starved"] = 1.0 if ending is not None and ("starv" in ending or "lack of food" in ending) else 0.0
        return notes

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The shared summary with each traced step read (message, stats, map), then how each game ended and its
        last messages."""
        shown = [_readable(r) for r in records]
        read = {id(s): r for s, r in zip(shown, records, strict=True)}  # notes and outcomes read the observations
        feedback = summarize_episodes(
            benchmark_id=self.task.benchmark_id,
            primary_metric=self.task.primary_metric,
            score_rule=self.task.score_rule,
            failure_return=self.task.failure_return,
            records=shown,
            outcome=lambda r: self.outcome(read.get(id(r), r)),
            notes=lambda r: self.episode_notes(read.get(id(r), r)),
        )
        deaths: dict[str, str] = {}
        last_messages: dict[str, list[list[Any]]] = {}
        for record in records[:_EXPLAINED_EPISODES]:
            trajectory = record.trajectory
            if trajectory is None or record.status != "ok":
                continue
            ending = end_of_game(trajectory.observations) if record.terminated else None
            if ending is not None:
                deaths[str(record.index)] = ending
            said = [[t, message_text(o)] for t, o in enumerate(trajectory.observations) if message_text(o)]
            last_messages[str(record.index)] = said[-_LAST_MESSAGES:]
        content = {**dict(feedback.content), "deaths": deaths, "last_messages": last_messages}
        return Feedback(score=feedback.score, content=content, artifacts=feedback.artifacts)


def _readable(record: EpisodeRecord) -> EpisodeRecord:
    """``record`` with each observation replaced by its message, named stats and map (for the trace)."""
    trajectory = record.trajectory
    if trajectory is None:
        return record
    shown = [{"message": message_text(o), "stats": named_stats(o), "map": map_rows(o)} for o in trajectory.observations]
    return dataclasses.replace(record, trajectory=dataclasses.replace(trajectory, observations=shown))


class _Seeded:
    """NLE seeded as a Benchmark needs: ``reset(seed=s)`` sets NetHack's core, disp and level-generation seeds
    from ``s`` (anti-TAS reseeding off) before the game starts; everything else passes through."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.unwrapped = env.unwrapped

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None:
            core, disp, lgen = _nethack_seeds(seed)
            self._env.unwrapped.seed(core=core, disp=disp, reseed=False, lgen=lgen)
        return self._env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self._env.step(action)

    def render(self) -> Any:
        return self._env.render()

    def close(self) -> None:
        self._env.close()


def make_nethack_score(**config: Any) -> NetHackBenchmark:
    """``nle/nethack-score``: NLE NetHackScore-v0; settings :class:`NetHackConfig`; failures count
    ``-max_episode_steps``. Builds in the Host without ``nle``; its Environments need the family's venv."""
    name = "nle/nethack-score"
    EXTRA.require(name)
    cfg = NetHackConfig.model_validate(config)
    steps = cfg.max_episode_steps or HORIZON
    worst = -float(steps)
    rule = f"mean return; Episodes the Policy failed count as {worst:g}; infra faults are left out"
    description = (
        f"NetHack 3.6 through the NetHack Learning Environment (nle {NLE_VERSION}, {GYMNASIUM_ID}) as a neutral "
        "human male Monk: explore the dungeon, descend, fight and survive; the game ends at death. Observation: a "
        "dict of NLE arrays: glyphs, chars, colors (the 21x79 map), blstats (27 bottom-line stats, named in "
        "metadata.blstats: score index 9, hitpoints 10, depth 12, experience level 18, time 20, hunger 21), message "
        "(the message line, Latin-1 codes, 0-terminated), the inventory (inv_glyphs, inv_letters, inv_oclasses, "
        "inv_strs) and the terminal (tty_chars 24x80, tty_cursor) for prompts and menus. Actions: Discrete(23) "
        "0 MORE (Enter), 1-8 move N E S W NE SE SW NW, 9-16 run in those directions, 17 UP, 18 DOWN, 19 WAIT, "
        "20 KICK, 21 EAT, 22 SEARCH (names in metadata.actions). Reward: in-game score gained (descending deeper, "
        "killing monsters, gold), minus 0.01 for a step that changes nothing. NetHack's RNGs are seeded from the "
        "Episode and the moon phase is fixed. The Episode terminates when the game ends and is truncated after "
        f"{steps} steps. Score (mean_return, maximize): mean Episode return; Episodes the Policy failed count as "
        f"{worst:g}; infra faults are left out. Settings (--set): max_episode_steps."
    )
    task = GymTask(
        benchmark_id=name,
        gymnasium_id=GYMNASIUM_ID,
        description=description,
        primary_metric="mean_return",
        score_rule=rule,
        failure_return=worst,
        max_episode_steps=steps,
        env_kwargs={
            "character": CHARACTER,
            "observation_keys": list(OBSERVATION_SPACES),
            "penalty_mode": "constant",
            "penalty_step": _FROZEN_PENALTY,
            "fix_moon_phase": True,
            "reseed": False,
        },
        metadata={
            "source": "nle",
            "nle_version": NLE_VERSION,
            "gymnasium_version": GYMNASIUM_VERSION,
            "actions": list(ACTIONS),
            "blstats": list(BLSTATS),
            "nle_environment": f"evoledger env install {EXTRA.name}",
        },
        programs=shipped("nle-nethack"),
    )
    return NetHackBenchmark(task)


make_nethack_score.config_model = NetHackConfig  # type: ignore[attr-defined]

BENCHMARKS: Final[dict[str, Callable[..., NetHackBenchmark]]] = {"nle/nethack-score": make_nethack_score}
CATALOG: Final[tuple[CatalogEntry, ...]] = (
    CatalogEntry(
        "nle/nethack-score",
        "nle",
        "NetHackScore-v0: NetHack 3.6 as a Monk, score gained (NLE; runs in its own environment)",
        EXTRA,
    ),
)
