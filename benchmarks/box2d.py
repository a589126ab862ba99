"""Gymnasium's Box2D tasks as Benchmarks: LunarLander (discrete and continuous), BipedalWalker (normal and hardcore)
and CarRacing (96x96x3 uint8 images).

They need the ``box2d`` extra (``pip install 'evoledger[box2d]'``: the ``Box2D`` and ``pygame`` modules). This
module imports neither: every factory calls :meth:`Extra.require` first, and gymnasium loads its Box2D environments
only when one is made, so ``evoledger benchmarks`` lists these names on an install without the extra.

Every score is the mean Episode return to maximize. An Episode the Policy failed (exception, timeout, invalid action,
protocol error, memory) counts as the failure return; infra faults are left out:

* ``box2d/lunar-lander`` (LunarLander-v3, 4 discrete actions) and ``box2d/lunar-lander-continuous`` (the same with
  ``continuous=True``): 1000 steps; a failed Episode counts as -1000. LunarLander's reward shaping is not bounded
  below: a Policy that fires the main engine until it flies off can score under -1000 (-2812 seen), so here the
  failure return is the catalogue's fixed floor, below every plain crash, not the worst possible return.
* ``box2d/bipedal-walker`` and ``box2d/bipedal-walker-hardcore`` (BipedalWalker-v3 with ``hardcore`` False / True):
  1600 steps in both modes; a failed Episode counts as -1000 (a fall costs -100, torque at most 0.112 per step).
* ``box2d/car-racing`` (CarRacing-v3): 1000 steps; a failed Episode counts as -1000 (every step costs 0.1 and
  leaving the playfield 100).

With a ``max_episode_steps`` above the default the failure return scales with it (-1000 x steps / default steps).

Configuration (``--set``, pydantic, unknown keys refused): ``max_episode_steps`` everywhere; LunarLander also
``gravity``, ``enable_wind``, ``wind_power``, ``turbulence_power``; CarRacing ``continuous`` (False: 5 discrete
actions), ``lap_complete_percent`` and ``domain_randomize``.

Feedback counts outcomes (LunarLander: ``landed`` / ``crashed`` / ``flew_away`` / ``timed_out``; BipedalWalker:
``reached_end`` / ``fell`` / ``timed_out``; CarRacing: ``lap_complete`` / ``left_playfield`` / ``timed_out``) and
per-Episode notes. Both come from step metrics the Environment records at every step, so the last step's metrics
reach Feedback even for Episodes whose trajectory is not decoded:

* LunarLander: ``distance_to_pad``, ``speed``, ``touchdown_speed`` (at the first leg contact), ``fuel`` (reward
  units spent on the engines so far) and ``max_tilt_deg``;
* BipedalWalker: ``progress`` (fraction of the course walked), ``max_progress`` and ``effort`` (summed absolute
  torque command);
* CarRacing: ``tiles_visited``, ``track_tiles``, ``track_fraction``, ``on_track`` (1 while a wheel touches the
  road), ``off_track_steps`` and ``speed``.

A last-step flag (``landed``, ``crashed``, ``flew_away``, ``fell``, ``reached_end``, ``lap_complete``,
``left_playfield``) says how a terminated Episode ended. CarRacing's ``trace.jsonl`` leaves the images out; its bulk
``observations.npz`` holds up to 24 images the Policy saw in each of the first two traced Episodes.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import math
import os
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import Artifact, CatalogEntry, EpisodeRecord, Extra, Feedback
from pydantic import Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "BipedalWalker",
    "CarRacing",
    "CarRacingConfig",
    "LunarLander",
    "LunarLanderConfig",
    "failure_return",
    "make_bipedal_walker",
    "make_bipedal_walker_hardcore",
    "make_car_racing",
    "make_lunar_lander",
    "make_lunar_lander_continuous",
]

EXTRA: Final = Extra("box2d", ("Box2D", "pygame"))
"""The optional extra every Benchmark of this module needs."""

FAILURE_RETURN: Final = -1000.0
"""What an Episode the Policy failed counts for at the default step limit."""

_FAILURE_NOTE: Final = "Episodes the Policy failed count as {worst}; infra faults are left out"


def _load_extra(name: str) -> None:
    """Check the extra for Benchmark ``name``, then import its modules quietly (before gymnasium does).

    Box2D's SWIG bindings warn (DeprecationWarning) while their C module initialises, and under ``-W error`` (as in
    this project's tests) that warning crashes the interpreter with a segmentation fault; pygame prints a banner on
    stdout, which would corrupt ``--json`` output. Both are silenced here, once, before any Environment is made.
    """
    EXTRA.require(name)
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"builtin type \w+ has no __module__ attribute", DeprecationWarning)
        for module in EXTRA.modules:
            importlib.import_module(module)


def failure_return(steps: int, default_steps: int) -> float:
    """-1000, scaled by ``steps / default_steps`` when the step limit is raised above its default."""
    return round(FAILURE_RETURN * max(1.0, steps / default_steps), 6)


_EVIDENCE: Final = VisualEvidence(episodes=2, frames=12, tile_width=150)
"""Contact sheets of two training Episodes per Feedback, rendered in the Host by pygame (no GL needed)."""


class _Box2DBenchmark(GymBenchmark):
    """A GymBenchmark whose Environment adds metrics read from the Box2D simulation after every step."""

    notes: tuple[str, ...] = ()
    """The step metrics whose last value is a per-Episode note in Feedback."""

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        return {
            **super().simulation_metrics(step),
            **self.body_metrics(step.env, step.action, step.observation, step.totals),
        }

    def body_metrics(self, env: Any, action: Any, observation: Any, totals: dict[str, float]) -> dict[str, float]:
        """Metrics of the step just taken, read from the unwrapped gymnasium ``env``; ``totals`` lasts one Episode."""
        return {}

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        metrics = record.final_metrics
        return {key: float(metrics[key]) for key in self.notes if key in metrics}

    def _ending(self, record: EpisodeRecord, labels: tuple[str, ...]) -> str:
        metrics = record.final_metrics
        for label in labels:
            if metrics.get(label):
                return label
        return "timed_out" if record.truncated else "terminated"


def _round(value: float) -> float:
    return float(round(value, 6))


# LunarLander -------------------------------------------------------------------------------------------------------


class LunarLanderConfig(GymConfig):
    """LunarLander settings: gravity and wind as well as the step limit (gymnasium's ranges)."""

    gravity: float = Field(default=-10.0, gt=-12.0, lt=0.0, description="Gravity (negative; gymnasium default -10).")
    enable_wind: bool = Field(default=False, description="Blow wind and turbulence on the lander.")
    wind_power: float = Field(default=15.0, ge=0.0, le=20.0, description="Wind strength when enable_wind.")
    turbulence_power: float = Field(
        default=1.5, ge=0.0, le=2.0, description="Rotational turbulence strength when enable_wind."
    )


class LunarLander(_Box2DBenchmark):
    """LunarLander-v3; outcomes ``landed`` / ``crashed`` / ``flew_away`` / ``timed_out``."""

    notes = ("distance_to_pad", "speed", "touchdown_speed", "fuel", "max_tilt_deg")

    def body_metrics(self, env: Any, action: Any, observation: Any, totals: dict[str, float]) -> dict[str, float]:
        if env.continuous:
            main_cmd, lateral = (float(v) for v in np.asarray(action, dtype=np.float64).reshape(-1)[:2])
            main = (min(main_cmd, 1.0) + 1.0) * 0.5 if main_cmd > 0.0 else 0.0
            side = min(abs(lateral), 1.0) if abs(lateral) > 0.5 else 0.0
        else:
            command = int(np.asarray(action))
            main, side = float(command == 2), float(command in (1, 3))
        totals["fuel"] = totals.get("fuel", 0.0) + 0.3 * main + 0.03 * side
        x, y, vx, vy, angle, _spin, left, right = (float(v) for v in observation[:8])
        tilt = abs((math.degrees(angle) + 180.0) % 360.0 - 180.0)
        totals["max_tilt_deg"] = max(totals.get("max_tilt_deg", 0.0), tilt)
        speed = _round(math.hypot(vx, vy))
        if (left or right) and "touchdown_speed" not in totals:
            totals["touchdown_speed"] = speed
        metrics = {
            "distance_to_pad": _round(math.hypot(x, y)),
            "speed": speed,
            "fuel": _round(totals["fuel"]),
            "max_tilt_deg": _round(totals["max_tilt_deg"]),
        }
        if "touchdown_speed" in totals:
            metrics["touchdown_speed"] = totals["touchdown_speed"]
        if env.game_over:
            metrics["crashed"] = 1.0
        elif abs(x) >= 1.0:
            metrics["flew_away"] = 1.0
        elif not env.lander.awake:
            metrics["landed"] = 1.0
        return metrics

    def outcome(self, record: EpisodeRecord) -> str:
        return self._ending(record, ("landed", "crashed", "flew_away"))


_LANDER_TEXT: Final = (
    "Land on the pad between the flags at (0, 0) (gymnasium LunarLander-v3{mode}; gravity {gravity}, wind {wind}). "
    "Observation (8 floats): [x, y, x velocity, y velocity, angle (rad), angular velocity, left leg contact, right "
    "leg contact]. {actions} Reward: shaping for moving closer to the pad, slower and upright, +10 per leg contact, "
    "-0.3 per frame of the main engine and -0.03 of a side engine; the Episode terminates with +100 when the lander "
    "comes to rest, -100 when it crashes or leaves the screen (|x| >= 1); truncated after {steps} steps. Score "
    "(mean_return, maximize): mean Episode return; {failure}."
)


def _make_lander(name: str, continuous: bool, config: Mapping[str, Any]) -> LunarLander:
    _load_extra(name)
    cfg = LunarLanderConfig.model_validate(config)
    steps = cfg.max_episode_steps or 1000
    worst = failure_return(steps, 1000)
    if continuous:
        actions = (
            "Action: [main, lateral], two floats in [-1, 1] (rejected, never clipped, outside): main > 0 fires the "
            "main engine at 50-100% power; |lateral| > 0.5 fires the left (< -0.5) or right (> 0.5) engine."
        )
    else:
        actions = "Actions: 0 do nothing, 1 fire the left engine, 2 the main engine, 3 the right engine."
    wind = f"power {cfg.wind_power}, turbulence {cfg.turbulence_power}" if cfg.enable_wind else "off"
    failure = _FAILURE_NOTE.format(worst=worst)
    return LunarLander(
        GymTask(
            benchmark_id=name,
            programs=shipped("box2d-lunar-lander", tunable="box2d-lunar-lander-pd"),
            visual_evidence=_EVIDENCE,
            gymnasium_id="LunarLander-v3",
            description=_LANDER_TEXT.format(
                mode=", continuous" if continuous else "",
                gravity=cfg.gravity,
                wind=wind,
                actions=actions,
                steps=steps,
                failure=failure,
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {failure}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={
                "continuous": continuous,
                "gravity": cfg.gravity,
                "enable_wind": cfg.enable_wind,
                "wind_power": cfg.wind_power,
                "turbulence_power": cfg.turbulence_power,
            },
            metadata={"gymnasium_reward_threshold": 200.0},
        )
    )


def make_lunar_lander(**config: Any) -> LunarLander:
    """``box2d/lunar-lander``: land softly with 4 discrete actions; failures count -1000."""
    return _make_lander("box2d/lunar-lander", False, config)


def make_lunar_lander_continuous(**config: Any) -> LunarLander:
    """``box2d/lunar-lander-continuous``: land softly with [main, lateral] throttle; failures count -1000."""
    return _make_lander("box2d/lunar-lander-continuous", True, config)


# BipedalWalker -----------------------------------------------------------------------------------------------------

_TERRAIN_STEP: Final = 14 / 30.0
_COURSE_END: Final = (200 - 10) * _TERRAIN_STEP  # (TERRAIN_LENGTH - TERRAIN_GRASS) * TERRAIN_STEP


class BipedalWalker(_Box2DBenchmark):
    """BipedalWalker-v3 (normal or hardcore); outcomes ``reached_end`` / ``fell`` / ``timed_out``."""

    notes = ("progress", "max_progress", "effort")

    def body_metrics(self, env: Any, action: Any, observation: Any, totals: dict[str, float]) -> dict[str, float]:
        progress = float(env.hull.position[0]) / _COURSE_END
        totals["max_progress"] = max(totals.get("max_progress", 0.0), progress)
        totals["effort"] = totals.get("effort", 0.0) + float(np.abs(np.asarray(action, dtype=np.float64)).sum())
        metrics = {
            "progress": _round(progress),
            "max_progress": _round(totals["max_progress"]),
            "effort": _round(totals["effort"]),
        }
        if env.game_over or progress < 0.0:
            metrics["fell"] = 1.0
        elif progress >= 1.0:
            metrics["reached_end"] = 1.0
        return metrics

    def outcome(self, record: EpisodeRecord) -> str:
        return self._ending(record, ("reached_end", "fell"))


def _make_walker(name: str, hardcore: bool, config: Mapping[str, Any]) -> BipedalWalker:
    _load_extra(name)
    cfg = GymConfig.model_validate(config)
    steps = cfg.max_episode_steps or 1600
    worst = failure_return(steps, 1600)
    failure = _FAILURE_NOTE.format(worst=worst)
    terrain = (
        "rough terrain with stumps, pits and stairs (hardcore)" if hardcore else "gently rolling terrain with grass"
    )
    return BipedalWalker(
        GymTask(
            benchmark_id=name,
            programs=shipped("box2d-bipedal-walker", tunable="box2d-bipedal-walker-gait"),
            visual_evidence=_EVIDENCE,
            gymnasium_id="BipedalWalker-v3",
            description=(
                f"Walk a two-legged robot to the end of {terrain} (gymnasium BipedalWalker-v3, hardcore="
                f"{hardcore}). Observation (24 floats): hull angle, hull angular velocity, horizontal and vertical "
                "speed, then per leg (left, right) hip angle, hip speed, knee angle, knee speed and ground contact "
                "(0/1), then 10 lidar ranges (fraction of the lidar length, 1 = nothing hit) ahead and below. "
                "Action: 4 floats in [-1, 1] (hip 1, knee 1, hip 2, knee 2 motor torques; rejected, never clipped, "
                "outside). Reward: about +300 in total for walking the whole course (130 per body length scaled), "
                "-5 per radian of hull tilt change, -0.00035 x 80 x |torque| per motor per step; -100 when the hull "
                f"touches the ground or the walker leaves the start backwards (terminated). Truncated after {steps} "
                f"steps. Score (mean_return, maximize): mean Episode return; {failure}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {failure}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={"hardcore": hardcore},
            metadata={"gymnasium_reward_threshold": 300.0},
        )
    )


def make_bipedal_walker(**config: Any) -> BipedalWalker:
    """``box2d/bipedal-walker``: walk the course; failures count -1000."""
    return _make_walker("box2d/bipedal-walker", False, config)


def make_bipedal_walker_hardcore(**config: Any) -> BipedalWalker:
    """``box2d/bipedal-walker-hardcore``: walk the course over obstacles; failures count -1000."""
    return _make_walker("box2d/bipedal-walker-hardcore", True, config)


# CarRacing ---------------------------------------------------------------------------------------------------------


class CarRacingConfig(GymConfig):
    """CarRacing settings: action mode, lap rule and colours as well as the step limit."""

    continuous: bool = Field(
        default=True, description="Continuous [steer, gas, brake] actions; False: 5 discrete actions."
    )
    lap_complete_percent: float = Field(
        default=0.95, gt=0.0, le=1.0, description="Fraction of the tiles to visit before crossing the start ends a lap."
    )
    domain_randomize: bool = Field(default=False, description="Random road and grass colours on every Episode.")


_PLAYFIELD: Final = 2000 / 6.0  # gymnasium's PLAYFIELD = 2000 / SCALE: the car beyond it ends the Episode


class CarRacing(_Box2DBenchmark):
    """CarRacing-v3; outcomes ``lap_complete`` / ``left_playfield`` / ``timed_out``."""

    notes = ("tiles_visited", "track_fraction", "off_track_steps", "speed")

    def body_metrics(self, env: Any, action: Any, observation: Any, totals: dict[str, float]) -> dict[str, float]:
        on_track = any(len(wheel.tiles) > 0 for wheel in env.car.wheels)
        totals["off_track_steps"] = totals.get("off_track_steps", 0.0) + (0.0 if on_track else 1.0)
        vx, vy = env.car.hull.linearVelocity
        tiles, track = int(env.tile_visited_count), len(env.track)
        metrics = {
            "tiles_visited": float(tiles),
            "track_tiles": float(track),
            "track_fraction": _round(tiles / track) if track else 0.0,
            "on_track": 1.0 if on_track else 0.0,
            "off_track_steps": totals["off_track_steps"],
            "speed": _round(math.hypot(vx, vy)),
        }
        x, y = env.car.hull.position
        if abs(x) > _PLAYFIELD or abs(y) > _PLAYFIELD:
            metrics["left_playfield"] = 1.0
        elif tiles == track or env.new_lap:
            metrics["lap_complete"] = 1.0
        return metrics

    def outcome(self, record: EpisodeRecord) -> str:
        return self._ending(record, ("lap_complete", "left_playfield"))

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The usual Feedback, but ``trace.jsonl`` leaves the images out (``"observation": null``: as JSON, three
        1000-step Episodes of 96x96x3 images are over 200 MB) and ``observations.npz`` (bulk) holds up to
        :data:`FRAMES_PER_EPISODE` images the Policy saw in each of the first :data:`FRAME_EPISODES` traced Episodes.
        """
        frames = _frames_npz(records)
        light = [_without_images(record) for record in records]
        feedback = super().feedback(light)
        if frames is None:
            return feedback
        artifact = Artifact(name="observations.npz", media_type="application/zip", data=frames, retention="bulk")
        return dataclasses.replace(feedback, artifacts=(*feedback.artifacts, artifact))


FRAME_EPISODES: Final = 2
"""How many Episodes ``observations.npz`` samples images from."""
FRAMES_PER_EPISODE: Final = 24
"""At most this many images per Episode, evenly spaced from the first observation to the last."""


def _without_images(record: EpisodeRecord) -> EpisodeRecord:
    if record.trajectory is None:
        return record
    blank = [None] * len(record.trajectory.observations)
    return dataclasses.replace(record, trajectory=dataclasses.replace(record.trajectory, observations=blank))


def _frames_npz(records: Sequence[EpisodeRecord]) -> bytes | None:
    """A zip of ``.npy`` arrays (``numpy.load`` reads it): ``record-<r>-frames`` (N, 96, 96, 3) uint8 and
    ``record-<r>-steps`` (N,) int64, the step of each image, where ``r`` is the Episode's position in this Evaluation
    (``record`` in ``trace.jsonl``); fixed timestamps, so the same Episodes give the same bytes. ``None`` when no
    record carries usable images."""
    buffer = io.BytesIO()
    written = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for position, record in enumerate(records):
            if written == FRAME_EPISODES:
                break
            observations = record.trajectory.observations if record.trajectory is not None else ()
            if len(observations) == 0:
                continue
            steps = np.unique(np.linspace(0, len(observations) - 1, FRAMES_PER_EPISODE).round().astype(np.int64))
            try:
                frames = np.stack([np.asarray(observations[int(t)], dtype=np.uint8) for t in steps])
            except (TypeError, ValueError):
                continue
            if frames.shape[1:] != (96, 96, 3):
                continue
            for kind, array in (("frames", frames), ("steps", steps)):
                data = io.BytesIO()
                np.lib.format.write_array(data, array, allow_pickle=False)
                entry = zipfile.ZipInfo(f"record-{position}-{kind}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                entry.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(entry, data.getvalue())
            written += 1
    return buffer.getvalue() if written else None


def make_car_racing(**config: Any) -> CarRacing:
    """``box2d/car-racing``: drive round the track from 96x96x3 images; failures count -1000."""
    name = "box2d/car-racing"
    _load_extra(name)
    cfg = CarRacingConfig.model_validate(config)
    steps = cfg.max_episode_steps or 1000
    worst = failure_return(steps, 1000)
    failure = _FAILURE_NOTE.format(worst=worst)
    if cfg.continuous:
        actions = (
            "Action: [steer, gas, brake] as three floats, steer in [-1, 1] (-1 full left), gas and brake in [0, 1] "
            "(rejected, never clipped, outside)."
        )
    else:
        actions = "Actions: 0 do nothing, 1 steer right, 2 steer left, 3 gas, 4 brake."
    return CarRacing(
        GymTask(
            benchmark_id=name,
            programs=shipped("box2d-car-racing", tunable="box2d-car-racing-pixels"),
            visual_evidence=_EVIDENCE,
            gymnasium_id="CarRacing-v3",
            description=(
                "Drive a car round a random closed track seen from above (gymnasium CarRacing-v3). Observation: a "
                "96x96x3 uint8 RGB image centred behind the car (which sits near rows 66-77, columns 45-50, facing "
                "up; the view rotates with the car and zooms in during the first second); the bottom 12 rows show "
                "speed, ABS sensors, steering and gyro bars; the road is grey, the grass green. "
                f"{actions} Reward: +1000/N for every one of the track's N tiles visited for the first time, -0.1 "
                f"per step; the Episode terminates when {cfg.lap_complete_percent:.0%} of the tiles are visited "
                "and the start line crossed, or with -100 when the car leaves the playfield; truncated after "
                f"{steps} steps. Score (mean_return, maximize): mean Episode return; {failure}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {failure}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={
                "continuous": cfg.continuous,
                "lap_complete_percent": cfg.lap_complete_percent,
                "domain_randomize": cfg.domain_randomize,
            },
            metadata={"gymnasium_reward_threshold": 900.0},
        )
    )


BENCHMARKS: dict[str, Callable[..., GymBenchmark]] = {
    "box2d/lunar-lander": make_lunar_lander,
    "box2d/lunar-lander-continuous": make_lunar_lander_continuous,
    "box2d/bipedal-walker": make_bipedal_walker,
    "box2d/bipedal-walker-hardcore": make_bipedal_walker_hardcore,
    "box2d/car-racing": make_car_racing,
}

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry("box2d/lunar-lander", "box2d", "LunarLander-v3: land on the pad with 4 discrete engines", EXTRA),
    CatalogEntry(
        "box2d/lunar-lander-continuous", "box2d", "LunarLander-v3 continuous: land with [main, lateral] throttle", EXTRA
    ),
    CatalogEntry(
        "box2d/bipedal-walker", "box2d", "BipedalWalker-v3: walk a 2-legged robot over rolling terrain", EXTRA
    ),
    CatalogEntry(
        "box2d/bipedal-walker-hardcore", "box2d", "BipedalWalker-v3 hardcore: walk over stumps, pits and stairs", EXTRA
    ),
    CatalogEntry("box2d/car-racing", "box2d", "CarRacing-v3: drive a random track from 96x96 RGB images", EXTRA),
)
