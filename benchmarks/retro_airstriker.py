"""Stable-Retro Airstriker, level 1 (the Sega Genesis shooter whose ROM ships in the ``stable-retro`` wheel), as the
Benchmark ``retro/airstriker``.

Needs the ``retro`` extra (``pip install 'evoledger[retro]'``); this module imports neither ``stable_retro`` nor its
emulator, so the name is listed without it and the factory checks the extra first. No other ROM is used or
accepted: Airstriker is the one redistributable ROM in the wheel (every other integration needs a ROM obtained
separately), and neither a ROM path nor a game or save state is a setting.

The Environment is upstream's ``stable_retro.make("Airstriker-Genesis-v0", state="Level1")`` with its defaults: the
RGB screen as observation, the ``FILTERED`` MultiBinary(12) button vector as action (one 0/1 per Genesis button, in
the order ``B, A, MODE, START, UP, DOWN, LEFT, RIGHT, C, Y, X, Z``; upstream's filter drops the combinations the
game does not use: MODE and START are ignored, and so are UP with DOWN or LEFT with RIGHT together), the reward is
the increase of the game's score and the Episode terminates at game over (all three lives lost). The emulator is
deterministic, so, as upstream's own training example does (``StochasticFrameSkip(n=4, stickprob=0.25)``), one
Policy step is ``frameskip`` emulator frames (4) and on the first frame of a step the previous action stays with
probability ``sticky_probability`` (0.25), drawn from the Episode's seed: Episodes differ, and open-loop plans do not
transfer. At most 18,000 frames (``max_episode_steps`` 4,500 at frameskip 4; upstream's 5 minutes at 60 frames a
second).

**Observation** (setting ``observation``): ``rgb`` (default): the screen, uint8 ``[224, 320, 3]``; the player's
ship is the light grey-white shape at the bottom (rows 170-215), the enemies are red ships above it, their shots
green dots, the ship's own shots red dots. ``ram``: the console's 64 KiB work RAM, uint8 ``[65536]``.

**Score** (``mean_score``, maximize): the mean Episode return, the game's score gained in the Episode (20 points an
enemy); an Episode the Policy failed (exception, timeout, invalid action, ...) counts as ``-max_episode_steps *
frameskip`` (-18,000 at the defaults, as upstream), below anything a running Policy can get (the score never falls);
infra faults are left out.

**Feedback** adds to the shared summary (``feedback_summary``): outcomes ``game_over`` / ``timed_out``; per-Episode
notes ``final_score``, ``lives_left``, ``frames``, ``points_per_1000_frames``, ``first_life_lost_step`` (when one
was) and the share of steps that pressed each of B (fire), LEFT, RIGHT, UP and DOWN; step metrics ``score`` and
``lives`` (the game's own counters); with RGB observations ``trace.jsonl`` shows each step's screen as the ship's
column, the enemies' and enemy shots' columns instead of the image; and contact sheets of rendered frames (visual
evidence, no OpenGL needed) for the first training Episodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

import gymnasium as gym
import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.feedback_summary import summarize_episodes
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, Extra, Feedback
from pydantic import Field

__all__ = ["BENCHMARKS", "BUTTONS", "CATALOG", "EXTRA", "AirstrikerBenchmark", "AirstrikerConfig", "read_screen"]

EXTRA: Final = Extra("retro", ("stable_retro",))
"""The optional extra ``retro/airstriker`` needs."""

GAME: Final = "Airstriker-Genesis-v0"
STATE: Final = "Level1"
HORIZON_FRAMES: Final = 18_000
"""Upstream's limit in emulator frames (5 minutes at 60 frames a second)."""
BUTTONS: Final = ("B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z")
"""The Genesis buttons, by position in the MultiBinary(12) action (B fires; A and C do nothing in this game)."""
_NOTED_BUTTONS: Final = ("B", "LEFT", "RIGHT", "UP", "DOWN")
_SHIP_ROWS: Final = (170, 216)
_BLOCK: Final = 8
_EVIDENCE: Final = VisualEvidence(episodes=2, frames=16, tile_width=160, max_steps=4_000, max_seconds=20.0)
"""Contact sheets of two training Episodes per Feedback, rendered by the emulator in the Host (no OpenGL)."""


class AirstrikerConfig(GymConfig):
    """``retro/airstriker`` settings (``--set``)."""

    max_episode_steps: int | None = Field(
        default=None,
        ge=1,
        le=HORIZON_FRAMES,
        description=f"Truncate Episodes after this many steps (default {HORIZON_FRAMES} frames / frameskip).",
    )
    observation: Literal["rgb", "ram"] = Field(
        default="rgb", description="rgb: the screen, uint8 [224, 320, 3]; ram: the console's work RAM, uint8 [65536]."
    )
    frameskip: int = Field(
        default=4, ge=1, le=8, description="Emulator frames per Policy step (4 as upstream's example)."
    )
    sticky_probability: float = Field(
        default=0.25, ge=0.0, lt=1.0, description="On a step's first frame the previous action stays with this "
        "probability (0.25 as upstream's example; 0 makes every Episode the same for the same actions)."
    )  # fmt: skip


def read_screen(screen: Any) -> dict[str, Any] | None:
    """What an RGB screen shows, compactly: the ship's column (or None), the columns of the enemies above the ship
    and of the enemy shots (sorted, at most 16 each), or None when ``screen`` is not a ``[224, 320, 3]`` image."""
    try:
        pixels = np.asarray(screen, dtype=np.int16)  # a recorded screen is nested lists of ints
    except (TypeError, ValueError, OverflowError):
        return None
    if pixels.shape != (224, 320, 3):
        return None
    top, bottom = _SHIP_ROWS
    band = pixels[top:bottom]
    light = (band.min(axis=-1) > 150) & (np.abs(band[..., 0] - band[..., 2]) < 40)
    counts = np.convolve(light.sum(axis=0).astype(np.float64), np.ones(21), mode="same")
    ship = int(np.argmax(counts)) if counts.max() > 0 else None
    red = (pixels[..., 0] > 150) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)
    height = top - top % _BLOCK  # above the ship, whose engines are red too
    blocks = red[:height].reshape(height // _BLOCK, _BLOCK, 320 // _BLOCK, _BLOCK).sum(axis=(1, 3))
    blocks[: 24 // _BLOCK] = 0  # the status line
    enemy_columns = sorted({int(c) * _BLOCK + _BLOCK // 2 for c in np.nonzero(blocks >= 12)[1]})
    green = (pixels[..., 1] > 150) & (pixels[..., 0] < 100) & (pixels[..., 2] < 100)
    shot_columns = sorted({int(c) for c in np.nonzero(green.any(axis=0))[0]})
    return {"ship_column": ship, "enemy_columns": enemy_columns[:16], "enemy_shot_columns": shot_columns[:16]}


class _StickyFrameSkip(gym.Wrapper[Any, Any, Any, Any]):
    """Upstream's ``StochasticFrameSkip``: ``frames`` emulator frames a step; on the first the previous action stays
    with probability ``sticky``, drawn from a generator seeded at ``reset(seed=...)``."""

    def __init__(self, env: Any, frames: int, sticky: float) -> None:
        super().__init__(env)
        self._frames = frames
        self._sticky = sticky
        self._current: Any = None
        self._rng = np.random.default_rng(0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._current = None
        self._rng = np.random.default_rng(seed)
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        total = 0.0
        result: Any = None
        for frame in range(self._frames):
            if self._current is None or frame >= 1 or self._rng.random() >= self._sticky:
                self._current = action
            observation, reward, terminated, truncated, info = self.env.step(self._current)
            total += float(reward)
            result = (observation, total, terminated, truncated, info)
            if terminated or truncated:
                break
        return result


class AirstrikerBenchmark(GymBenchmark):
    """``retro/airstriker``: outcomes, notes and the trace as the module docstring says."""

    def __init__(self, task: GymTask, observation: str, frameskip: int, sticky: float) -> None:
        self._observation = observation
        self._frameskip = frameskip
        self._sticky = sticky
        super().__init__(task)

    def _make_gym_env(self, **overrides: Any) -> Any:
        import stable_retro

        kinds = stable_retro.Observations
        env = stable_retro.make(
            GAME,
            state=STATE,
            obs_type=kinds.RAM if self._observation == "ram" else kinds.IMAGE,
            render_mode=overrides.get("render_mode"),  # upstream's default opens a window
        )
        wrapped = _StickyFrameSkip(env, self._frameskip, self._sticky)
        return gym.wrappers.TimeLimit(wrapped, max_episode_steps=self.task.max_episode_steps)

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals["lives"] = None

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        return {name: float(step.info[name]) for name in ("score", "lives") if name in step.info}

    def outcome(self, record: EpisodeRecord) -> str:
        return "game_over" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        frames = record.steps * self._frameskip
        notes = {"final_score": float(record.episode_return), "frames": float(frames)}
        if frames > 0:
            notes["points_per_1000_frames"] = 1000.0 * float(record.episode_return) / frames
        trajectory = record.trajectory
        if trajectory is None:
            return notes
        lives = [m.get("lives") for m in trajectory.metrics]
        known = [float(v) for v in lives if v is not None]
        if known:
            notes["lives_left"] = known[-1]
            lost = next((t for t, v in enumerate(known) if v < known[0]), None)
            if lost is not None:
                notes["first_life_lost_step"] = float(lost)
        if trajectory.actions:
            pressed = np.zeros(len(BUTTONS))
            for action in trajectory.actions:
                row = np.asarray(action).reshape(-1)
                if row.shape == (len(BUTTONS),):
                    pressed += row != 0
            for name in _NOTED_BUTTONS:
                notes[f"{name.lower()}_share"] = float(pressed[BUTTONS.index(name)]) / len(trajectory.actions)
        return notes

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The shared summary, its trace showing what each RGB screen holds instead of the image, then the visual
        evidence (re-simulated from the records as they are)."""
        shown = [_with_screens(r) for r in records] if self._observation == "rgb" else list(records)
        feedback = summarize_episodes(
            benchmark_id=self.task.benchmark_id,
            primary_metric=self.task.primary_metric,
            score_rule=self.task.score_rule,
            failure_return=self.task.failure_return,
            records=shown,
            outcome=self.outcome,
            notes=self.episode_notes,
        )
        return self.with_visual_evidence(feedback, records)


def _with_screens(record: EpisodeRecord) -> EpisodeRecord:
    """``record`` with each RGB observation replaced by :func:`read_screen` of it (for the trace)."""
    trajectory = record.trajectory
    if trajectory is None:
        return record
    screens = [read_screen(o) for o in trajectory.observations]
    return dataclasses.replace(record, trajectory=dataclasses.replace(trajectory, observations=screens))


def make_airstriker(**config: Any) -> AirstrikerBenchmark:
    """``retro/airstriker``: Airstriker level 1; settings :class:`AirstrikerConfig`; failures count minus the frame
    limit."""
    name = "retro/airstriker"
    EXTRA.require(name)
    cfg = AirstrikerConfig.model_validate(config)
    steps = cfg.max_episode_steps or HORIZON_FRAMES // cfg.frameskip
    worst = -float(steps * cfg.frameskip)
    rule = f"mean return (game score gained); Episodes the Policy failed count as {worst:g}; infra faults are left out"
    if cfg.observation == "rgb":
        seen = (
            "uint8 [224, 320, 3], the screen: the player's light grey-white ship at the bottom (rows 170-215), red "
            "enemy ships above it, their shots green dots, the ship's own shots red dots, lives and score on the top "
            "line"
        )
    else:
        seen = "uint8 [65536], the console's work RAM (decode the game state yourself)"
    description = (
        "Sega Genesis Airstriker, level 1 (stable-retro Airstriker-Genesis-v0, state Level1; the ROM ships in the "
        "stable-retro wheel): a vertical shooter; shoot the enemy ships and avoid them and their shots. Observation: "
        + seen
        + ". Action: MultiBinary(12), one 0/1 per Genesis button in the order "
        + ", ".join(BUTTONS)
        + " "
        "(upstream's FILTERED buttons: B fires, a shot only when B is pressed anew; LEFT/RIGHT/UP/DOWN move; MODE and "
        "START are ignored). One step is " + f"{cfg.frameskip} emulator frames; on its first frame the previous "
        f"action stays with probability {cfg.sticky_probability:g}. Reward: the game's score gained (20 points an "
        "enemy). The Episode terminates at game over (three lives lost) and is truncated after "
        f"{steps} steps. Score (mean_score, maximize): mean Episode return; Episodes the Policy failed count as "
        f"{worst:g}; infra faults are left out. Settings (--set): max_episode_steps, observation (rgb or ram), "
        "frameskip, sticky_probability."
    )
    task = GymTask(
        benchmark_id=name,
        gymnasium_id=GAME,
        description=description,
        primary_metric="mean_score",
        score_rule=rule,
        failure_return=worst,
        max_episode_steps=steps,
        env_kwargs={
            "state": STATE,
            "observation": cfg.observation,
            "frameskip": cfg.frameskip,
            "sticky_probability": cfg.sticky_probability,
            "use_restricted_actions": "FILTERED",
        },
        metadata={
            "source": "stable-retro",
            "stable_retro_version": _version(),
            "buttons": list(BUTTONS),
            "retro_extra": EXTRA.install_command,
        },
        programs=shipped("retro-airstriker"),
        visual_evidence=_EVIDENCE,
    )
    return AirstrikerBenchmark(task, cfg.observation, cfg.frameskip, cfg.sticky_probability)


make_airstriker.config_model = AirstrikerConfig  # type: ignore[attr-defined]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stable-retro")
    except PackageNotFoundError:  # pragma: no cover - the extra is checked before
        return "unknown"


BENCHMARKS: Final[dict[str, Callable[..., AirstrikerBenchmark]]] = {"retro/airstriker": make_airstriker}
CATALOG: Final[tuple[CatalogEntry, ...]] = (
    CatalogEntry(
        "retro/airstriker",
        "retro",
        "Airstriker-Genesis-v0 level 1: a Sega Genesis shooter from the screen (ROM in the stable-retro wheel)",
        EXTRA,
    ),
)
