"""ALE Tetris (the Atari 2600 game, whose ROM ships inside the ``ale-py`` wheel) as the Benchmark ``ale/tetris``.

Needs the ``ale`` extra (``pip install 'evoledger[ale]'``); this module imports neither ``ale_py`` nor its
environments, so the name is listed without it and the factory checks the extra first. No other ROM is used or
accepted: the other Atari games need ROMs obtained separately, and a ROM directory is not a setting.

The Environment is gymnasium ``ALE/Tetris-v5`` with its v5 defaults, as upstream runs it: frameskip 4 (one Policy
step is four emulator frames), sticky actions (the previous action repeats on each frame with probability
``repeat_action_probability``, 0.25), the minimal action set (5 actions: 0 NOOP, 1 FIRE = rotate, 2 RIGHT, 3 LEFT,
4 DOWN = drop faster) and at most 27,000 Policy steps (108,000 frames). The game ends when the stack reaches the top
(terminated); the step limit truncates.

**Observation** (setting ``observation``): ``rgb`` (default, as upstream): the screen, uint8 ``[210, 160, 3]``; the
well is 10 cells wide and 22 high, the cell in row ``r`` (0 = top) and column ``c`` is drawn around pixel
``(199 - 8 * (21 - r), 25 + 4 * c)`` on the well's grey ``(111, 111, 111)``. ``ram``: the console's 128 bytes of RAM,
uint8 ``[128]``, a far smaller record (every step of an RGB Episode stores 100,800 bytes before compression, a RAM
one 128) for Policies that decode the game state themselves.

**Score** (``mean_return``, maximize): the mean Episode return (the game's own score: one point per cleared row); an
Episode the Policy failed (exception, timeout, invalid action, ...) counts as ``-max_episode_steps`` (-27,000 at
the default, as upstream), below anything a running Policy can get (rewards are never negative); infra faults are
left out.

**Feedback** adds to the shared summary (``feedback_summary``): outcomes ``topped_out`` (the stack reached the top)
/ ``timed_out`` (the step limit); per-Episode notes ``rows_cleared``, ``rows_per_1000_steps`` and the share of
steps spent on each action (``noop_share``, ``fire_share``, ``right_share``, ``left_share``, ``down_share``); the
step metric ``rows_cleared`` (cumulative); with RGB observations ``trace.jsonl`` shows each step's well as 22
strings of ``.`` (empty) and ``#`` (filled, the falling piece included) instead of the image; and contact sheets of
rendered frames (visual evidence, no OpenGL needed) for the first training Episodes.
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

__all__ = ["ACTIONS", "BENCHMARKS", "CATALOG", "EXTRA", "TetrisBenchmark", "TetrisConfig", "read_well"]

EXTRA: Final = Extra("ale", ("ale_py",))
"""The optional extra ``ale/tetris`` needs."""

GYMNASIUM_ID: Final = "ALE/Tetris-v5"
HORIZON: Final = 27_000
"""Upstream's step limit (108,000 emulator frames at frameskip 4), also the largest ``max_episode_steps``."""
ACTIONS: Final = ("noop", "fire", "right", "left", "down")
"""The minimal action set, by action index (FIRE rotates the piece, DOWN drops it faster)."""
WELL_ROWS: Final = 22
WELL_COLUMNS: Final = 10
_ROW_PIXELS: Final = 199 - 8 * np.arange(WELL_ROWS)[::-1]
_COLUMN_PIXELS: Final = 25 + 4 * np.arange(WELL_COLUMNS)
_GREY: Final = 111

_EVIDENCE: Final = VisualEvidence(episodes=2, frames=16, tile_width=160, max_steps=12_000, max_seconds=20.0)
"""Contact sheets of two training Episodes per Feedback, rendered by the emulator in the Host (no OpenGL)."""


class TetrisConfig(GymConfig):
    """``ale/tetris`` settings (``--set``)."""

    max_episode_steps: int | None = Field(
        default=None, ge=1, le=HORIZON, description=f"Truncate Episodes after this many steps (default {HORIZON})."
    )
    observation: Literal["rgb", "ram"] = Field(
        default="rgb", description="rgb: the screen, uint8 [210, 160, 3]; ram: the console's RAM, uint8 [128]."
    )
    repeat_action_probability: float = Field(
        default=0.25, ge=0.0, lt=1.0, description="Sticky actions: the previous action repeats on a frame with this "
        "probability (0.25 as upstream; 0 makes an Episode depend only on its seed and the actions)."
    )  # fmt: skip


def read_well(screen: Any) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """The well read from an RGB screen: ``[22, 10]`` booleans, row 0 at the top, True where a cell is filled."""
    pixels = np.asarray(screen)[_ROW_PIXELS][:, _COLUMN_PIXELS]
    empty: np.ndarray[Any, np.dtype[np.bool_]] = np.all(pixels == _GREY, axis=-1)
    return ~empty


def _well_rows(screen: Any) -> list[str] | None:
    """The well as 22 strings of ``.`` and ``#``, or None when ``screen`` is not an RGB screen."""
    try:
        array = np.asarray(screen, dtype=np.uint8)
    except (TypeError, ValueError):
        return None
    if array.shape != (210, 160, 3):
        return None
    return ["".join("#" if cell else "." for cell in row) for row in read_well(array)]


class TetrisBenchmark(GymBenchmark):
    """``ale/tetris``: outcomes, notes and the trace as the module docstring says."""

    def __init__(self, task: GymTask, observation: str) -> None:
        self._observation = observation
        super().__init__(task)

    def _make_gym_env(self, **overrides: Any) -> Any:
        _load_ale()
        return super()._make_gym_env(**overrides)

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals["rows"] = 0.0

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        step.totals["rows"] += step.reward
        return {"rows_cleared": step.totals["rows"]}

    def outcome(self, record: EpisodeRecord) -> str:
        return "topped_out" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        notes = {"rows_cleared": float(record.episode_return)}
        if record.steps > 0:
            notes["rows_per_1000_steps"] = 1000.0 * float(record.episode_return) / record.steps
        trajectory = record.trajectory
        if trajectory is not None and trajectory.actions:
            chosen = [a for a in trajectory.actions if isinstance(a, int) and 0 <= a < len(ACTIONS)]
            counts = np.bincount(np.asarray(chosen, dtype=np.int64), minlength=len(ACTIONS))
            for name, count in zip(ACTIONS, counts, strict=True):
                notes[f"{name}_share"] = float(count) / len(trajectory.actions)
        return notes

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The shared summary, its trace showing the well instead of each RGB image, then the visual evidence
        (re-simulated from the records as they are)."""
        shown = [_with_wells(r) for r in records] if self._observation == "rgb" else list(records)
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


def _with_wells(record: EpisodeRecord) -> EpisodeRecord:
    """``record`` with each RGB observation replaced by the well it shows (for the trace)."""
    trajectory = record.trajectory
    if trajectory is None:
        return record
    wells = [_well_rows(o) for o in trajectory.observations]
    return dataclasses.replace(record, trajectory=dataclasses.replace(trajectory, observations=wells))


def _load_ale() -> None:
    """Register the ALE environments with gymnasium, its start-up banner silenced (it would clutter the CLI)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    gym.register_envs(ale_py)


def make_tetris(**config: Any) -> TetrisBenchmark:
    """``ale/tetris``: ALE Tetris-v5; settings :class:`TetrisConfig`; failures count ``-max_episode_steps``."""
    name = "ale/tetris"
    EXTRA.require(name)
    cfg = TetrisConfig.model_validate(config)
    steps = cfg.max_episode_steps or HORIZON
    worst = -float(steps)
    rule = f"mean return; Episodes the Policy failed count as {worst:g}; infra faults are left out"
    if cfg.observation == "rgb":
        seen = (
            "uint8 [210, 160, 3], the screen: the grey well (10 cells wide, 22 high) on the left, the score on the "
            "right; cell (row r from the top, column c) is drawn around pixel (199 - 8 * (21 - r), 25 + 4 * c) and "
            "is empty where that pixel is grey (111, 111, 111)"
        )
    else:
        seen = "uint8 [128], the console's RAM (decode the game state yourself)"
    description = (
        "Atari 2600 Tetris (gymnasium ALE/Tetris-v5, ale-py; the ROM ships in the ale-py wheel): place the falling "
        "pieces to complete and clear rows. Observation: " + seen + ". Actions: Discrete(5) 0 NOOP, 1 FIRE (rotate), "
        "2 RIGHT, 3 LEFT, 4 DOWN (drop faster); a move shows on screen a step later, and holding FIRE rotates once. "
        "Frameskip 4; sticky actions: the previous action repeats on each frame with probability "
        f"{cfg.repeat_action_probability:g}. Reward: the game's score, one point per cleared row. The Episode "
        f"terminates when the stack reaches the top and is truncated after {steps} steps. Score (mean_return, "
        f"maximize): mean Episode return; Episodes the Policy failed count as {worst:g}; infra faults are left out. "
        "Settings (--set): max_episode_steps, observation (rgb or ram), repeat_action_probability."
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
            "obs_type": cfg.observation,
            "repeat_action_probability": cfg.repeat_action_probability,
            "frameskip": 4,
            "full_action_space": False,
        },
        metadata={
            "source": "ale",
            "ale_py_version": _version(),
            "actions": list(ACTIONS),
            "ale_extra": EXTRA.install_command,
        },
        programs=shipped("ale-tetris"),
        visual_evidence=_EVIDENCE,
    )
    return TetrisBenchmark(task, cfg.observation)


make_tetris.config_model = TetrisConfig  # type: ignore[attr-defined]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ale-py")
    except PackageNotFoundError:  # pragma: no cover - the extra is checked before
        return "unknown"


BENCHMARKS: Final[dict[str, Callable[..., TetrisBenchmark]]] = {"ale/tetris": make_tetris}
CATALOG: Final[tuple[CatalogEntry, ...]] = (
    CatalogEntry(
        "ale/tetris", "ale", "ALE/Tetris-v5: Atari 2600 Tetris from the screen (ROM in the ale-py wheel)", EXTRA
    ),
)
