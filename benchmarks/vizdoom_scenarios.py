"""ViZDoom's twelve wheel-bundled scenarios as Benchmarks: ``vizdoom/<scenario>`` (``vizdoom/basic``, ...).

Needs the ``vizdoom`` extra (``pip install 'evoledger[vizdoom]'``); this module imports no ``vizdoom``, so the names
are listed without it and every factory checks the extra first. The scenario configurations and WADs ship in the
vizdoom wheel (Freedoom-based); the commercial Doom / Doom II IWADs are not used, and no WAD or configuration path is
a setting. The Environments are vizdoom's own gymnasium ones (``Vizdoom<Scenario>-v1``, one engine tic per step,
at most one button per step), rendered in software (no display, no OpenGL). The engine reads no configuration file
(``_vizdoom.ini``) here, but it still creates an empty ``_vizdoom/`` folder in the working directory of the process
that runs the Environment (a path compiled into it).

**Observation** (a dict, as vizdoom gives it): ``screen`` uint8 ``[240, 320, 3]`` (RGB, the player's view);
``gamevariables`` float32 ``[k]`` where the scenario has game variables (named in the spec's description and
metadata); ``basic-audio`` adds ``audio`` int16 ``[1260, 2]``, ``basic-notifications`` a ``notifications`` string.
**Action**: an int, 0 = no-op, then one button each (named, in order, in the description and metadata
``actions``); ``deathmatch`` takes ``{"binary": int 0-17, "continuous": [3 floats]}`` (look up/down, turn
left/right, move left/right deltas).

**Score** (``mean_return``, maximize): the mean Episode return (the scenario's own reward); an Episode the Policy
failed (exception, timeout, invalid action, ...) counts as ``-max_episode_steps`` (upstream's rule; in ``basic``
and ``deadly-corridor`` a very bad running Policy can score lower: missed shots and deaths cost more than a step);
infra faults are left out.

**Feedback** adds to the shared summary (``feedback_summary``): outcomes ``died`` (the player died),
``finished`` (the scenario ended otherwise before the step limit: the target killed, the vest reached) and
``timed_out``; per-Episode notes: each game variable at the end (``health``, ``ammo2``, ``killcount``, ...) and
the share of steps spent on each action; step metrics: the game variables and ``dead``; the trace summarises the
screen (shape, mean) and lists the game variables; contact sheets of rendered frames for the first training
Episodes (visual evidence).

**Programs**: every scenario ships the no-op baseline and a heuristic (:data:`HEURISTICS`). In ``deathmatch`` the
return counts every monster that dies, also those the monsters kill among themselves, so even the no-op scores
(1.5 to 2.75 over 8 Episodes); its heuristic keeps moving and strafing, turns when blocked or hurt and shoots with
the starting pistol what crosses the sights (6.4 and 7.5 over the same Episodes: it lives longer).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import BenchmarkPrograms, CatalogEntry, EpisodeRecord, Extra
from evoledger.ledger.errors import ConfigError

__all__ = ["BENCHMARKS", "CATALOG", "EXTRA", "SCENARIOS", "Scenario", "VizdoomBenchmark"]

EXTRA: Final = Extra("vizdoom", ("vizdoom",))
"""The optional extra every Benchmark of this module needs."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One wheel-bundled scenario: its registry task, vizdoom gymnasium id, step limit and what it is about."""

    task: str
    gymnasium_id: str
    steps: int
    variables: tuple[str, ...]
    summary: str
    buttons: tuple[str, ...]
    """The binary buttons as the scenario declares them."""

    @property
    def name(self) -> str:
        return f"vizdoom/{self.task}"

    @property
    def actions(self) -> list[str]:
        """The discrete actions by index: ``noop``, then one button each, in reverse of the declared order."""
        return ["noop", *reversed(self.buttons)]


_SHOOTER: Final = ("move_left", "move_right", "attack")
_TURRET: Final = ("turn_left", "turn_right", "attack")
_WALKER: Final = ("turn_left", "turn_right", "move_forward")
_DEATHMATCH: Final = (
    "attack", "speed", "strafe", "move_right", "move_left", "move_backward", "move_forward", "turn_right", "turn_left",
    "select_weapon1", "select_weapon2", "select_weapon3", "select_weapon4", "select_weapon5", "select_weapon6",
    "select_next_weapon", "select_prev_weapon",
)  # fmt: skip
SCENARIOS: Final = (
    Scenario("basic", "VizdoomBasic-v1", 300, ("AMMO2",), "shoot the monster across the room: +101 for the kill, "
             "-5 per missed shot, -1 per step", _SHOOTER),
    Scenario("basic-audio", "VizdoomBasicAudio-v1", 300, ("AMMO2",), "basic, with the game's sound as an extra "
             "observation", _SHOOTER),
    Scenario("basic-notifications", "VizdoomBasicNotifications-v1", 300, ("AMMO2",), "basic, with the game's "
             "notification messages as an extra observation", _SHOOTER),
    Scenario("deadly-corridor", "VizdoomDeadlyCorridor-v1", 2100, ("HEALTH",), "reach the vest at the end of a "
             "corridor guarded by shooting monsters: reward for getting closer, -100 for dying",
             ("move_left", "move_right", "attack", "move_forward", "move_backward", "turn_left", "turn_right")),
    Scenario("deathmatch", "VizdoomDeathmatch-v1", 4200, ("KILLCOUNT", "HEALTH", "ARMOR", "SELECTED_WEAPON",
             "SELECTED_WEAPON_AMMO"), "kill as many monsters as possible in an arena with weapons and items",
             _DEATHMATCH),
    Scenario("defend-center", "VizdoomDefendCenter-v1", 2100, ("AMMO2", "HEALTH"), "turn in the centre of a "
             "round room and shoot the approaching monsters: +1 per kill, -1 for dying", _TURRET),
    Scenario("defend-line", "VizdoomDefendLine-v1", 2100, ("AMMO2", "HEALTH"), "shoot the monsters coming from "
             "across the room: +1 per kill, -1 for dying", _TURRET),
    Scenario("health-gathering", "VizdoomHealthGathering-v1", 2100, ("HEALTH",), "survive on a floor of acid by "
             "picking up medkits: +1 per step alive, -100 for dying", _WALKER),
    Scenario("health-gathering-supreme", "VizdoomHealthGatheringSupreme-v1", 2100, ("HEALTH",), "health-gathering "
             "in a maze with fewer medkits and poison vials", _WALKER),
    Scenario("my-way-home", "VizdoomMyWayHome-v1", 2100, (), "find the vest in a maze of rooms: +1 for reaching "
             "it, -0.0001 per step", ("turn_left", "turn_right", "move_forward", "move_left", "move_right")),
    Scenario("predict-position", "VizdoomPredictPosition-v1", 300, (), "hit a moving monster with a rocket: +1 "
             "for the hit, -0.001 per step", _TURRET),
    Scenario("take-cover", "VizdoomTakeCover-v1", 2100, ("HEALTH",), "dodge the fireballs of monsters across the "
             "room by moving left and right: +1 per step alive", ("move_left", "move_right")),
)  # fmt: skip

HEURISTICS: Final = {
    "basic": "vizdoom-basic-heuristic",
    "basic-audio": "vizdoom-basic-audio-heuristic",
    "basic-notifications": "vizdoom-basic-notifications-heuristic",
    "deadly-corridor": "vizdoom-deadly-corridor-heuristic",
    "deathmatch": "vizdoom-deathmatch-heuristic",
    "defend-center": "vizdoom-defend-center-heuristic",
    "defend-line": "vizdoom-defend-line-heuristic",
    "health-gathering": "vizdoom-health-gathering-heuristic",
    "health-gathering-supreme": "vizdoom-health-gathering-heuristic",
    "my-way-home": "vizdoom-my-way-home-heuristic",
    "predict-position": "vizdoom-predict-position-heuristic",
    "take-cover": "vizdoom-take-cover-heuristic",
}
"""Every scenario's heuristic Program (the two health-gathering scenarios share one); every scenario shares the no-op
``vizdoom-baseline``."""

_EVIDENCE: Final = VisualEvidence(episodes=2, frames=12, tile_width=160, max_steps=5_000, max_seconds=20.0)
"""Contact sheets of two training Episodes per Feedback, rendered by the engine in the Host (software, no GL)."""


class VizdoomBenchmark(GymBenchmark):
    """A ViZDoom scenario: outcomes, notes and step metrics as the module docstring says."""

    def __init__(self, scenario: Scenario, task: GymTask) -> None:
        self._scenario = scenario
        super().__init__(task)

    @property
    def scenario(self) -> Scenario:
        return self._scenario

    def _make_gym_env(self, **overrides: Any) -> Any:
        _load_vizdoom()
        env = super()._make_gym_env(**overrides)
        env.unwrapped.game.set_doom_config_path(os.devnull)  # else the engine writes _vizdoom.ini into the cwd
        return env

    def start_episode(self, env: Any, info: Mapping[str, Any], totals: dict[str, Any]) -> None:
        totals["variables"] = {}

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """``dead`` and the game variables; at the Episode's end (whose observation vizdoom fills with zeros) the
        last values seen."""
        observation = step.observation
        values = observation.get("gamevariables") if isinstance(observation, Mapping) else None
        ended = step.terminated or step.truncated
        if values is not None and not ended:
            step.totals["variables"] = {
                name.lower(): float(value)
                for name, value in zip(self._scenario.variables, np.asarray(values).tolist(), strict=False)
            }
        return {"dead": 1.0 if step.env.game.is_player_dead() else 0.0, **step.totals["variables"]}

    def outcome(self, record: EpisodeRecord) -> str:
        if record.final_metrics.get("dead", 0.0) >= 0.5:
            return "died"
        if record.terminated and record.steps < self.task.max_episode_steps:
            return "finished"
        return "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        notes = {
            name.lower(): float(record.final_metrics[name.lower()])
            for name in self._scenario.variables
            if name.lower() in record.final_metrics
        }
        trajectory = record.trajectory
        actions = self.task.metadata.get("actions")
        if trajectory is not None and trajectory.actions and isinstance(actions, list):
            chosen = [a for a in trajectory.actions if isinstance(a, int) and 0 <= a < len(actions)]
            counts = np.bincount(np.asarray(chosen, dtype=np.int64), minlength=len(actions))
            for name, count in zip(actions, counts, strict=True):
                notes[f"{name}_share"] = float(count) / len(trajectory.actions)
        return notes


def _load_vizdoom() -> None:
    """Register vizdoom's gymnasium environments (importing the wrapper does it)."""
    import vizdoom.gymnasium_wrapper  # noqa: F401


def _build(scenario: Scenario, config: Mapping[str, Any]) -> VizdoomBenchmark:
    EXTRA.require(scenario.name)
    cfg = GymConfig.model_validate(dict(config))
    steps = cfg.max_episode_steps or scenario.steps
    if steps > scenario.steps:
        raise ConfigError(
            f"--set max_episode_steps={steps} for {scenario.name} is over the scenario's own limit of "
            f"{scenario.steps} steps; use at most {scenario.steps}"
        )
    worst = -float(steps)
    names = scenario.actions
    if scenario.task == "deathmatch":
        actions = (
            f'{{"binary": int 0-{len(names) - 1}, "continuous": [3 floats]}}: binary ' + ", ".join(
                f"{i} {n}" for i, n in enumerate(names)) + "; continuous: look up/down, turn left/right and move "
            "left/right deltas"
        )  # fmt: skip
    else:
        actions = f"Discrete({len(names)}) " + ", ".join(f"{i} {n}" for i, n in enumerate(names))
    variables = ", ".join(v.lower() for v in scenario.variables) or "none"
    rule = f"mean return; Episodes the Policy failed count as {worst:g}; infra faults are left out"
    description = (
        f"ViZDoom {scenario.task} ({scenario.gymnasium_id}, vizdoom; scenario and WAD from the vizdoom wheel): "
        f"{scenario.summary}. Observation: a dict with screen uint8 [240, 320, 3] (RGB view)"
        + (f", gamevariables float32 [{len(scenario.variables)}] ({variables})" if scenario.variables else "")
        + (", audio int16 [1260, 2]" if scenario.task == "basic-audio" else "")
        + (", notifications (a string)" if scenario.task == "basic-notifications" else "")
        + f". Actions: {actions}. One engine tic per step; the Episode ends when the scenario ends (death, goal) "
        f"or after {steps} steps. Score (mean_return, maximize): mean Episode return; Episodes the Policy failed "
        f"count as {worst:g}; infra faults are left out. Settings (--set): max_episode_steps."
    )
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "vizdoom-baseline",
        heuristic=PROGRAMS_DIR / HEURISTICS[scenario.task] if scenario.task in HEURISTICS else None,
    )
    task = GymTask(
        benchmark_id=scenario.name,
        gymnasium_id=scenario.gymnasium_id,
        description=description,
        primary_metric="mean_return",
        score_rule=rule,
        failure_return=worst,
        max_episode_steps=steps,
        metadata={
            "source": "vizdoom",
            "vizdoom_version": _version(),
            "actions": names,
            "game_variables": [v.lower() for v in scenario.variables],
            "vizdoom_extra": EXTRA.install_command,
        },
        programs=programs,
        visual_evidence=_EVIDENCE,
    )
    return VizdoomBenchmark(scenario, task)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vizdoom")
    except PackageNotFoundError:  # pragma: no cover - the extra is checked before
        return "unknown"


def _factory(scenario: Scenario) -> Callable[..., VizdoomBenchmark]:
    def make(**config: Any) -> VizdoomBenchmark:
        return _build(scenario, config)

    make.__name__ = make.__qualname__ = f"make_{scenario.task.replace('-', '_')}"
    make.__doc__ = f"``{scenario.name}`` ({scenario.gymnasium_id}); settings: max_episode_steps."
    make.config_model = GymConfig  # type: ignore[attr-defined]
    return make


BENCHMARKS: Final[dict[str, Callable[..., VizdoomBenchmark]]] = {s.name: _factory(s) for s in SCENARIOS}
CATALOG: Final[tuple[CatalogEntry, ...]] = tuple(
    CatalogEntry(name=s.name, family="vizdoom", summary=f"{s.gymnasium_id}: {s.summary.split(':')[0]}", extra=EXTRA)
    for s in SCENARIOS
)
