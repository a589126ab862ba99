"""Crafter (crafter 1.8.3) as Benchmarks: ``crafter/achievement-score`` (RGB) and ``-symbolic`` (local symbolic).

The Episodes run :class:`~evoledger.benchmarks.crafter_env.CrafterEnv`, a gymnasium environment around
``crafter.Env(area=(64, 64), view=(9, 9), size=(64, 64), reward=True, length=max_episode_steps, seed=Episode seed)``
(the task "CrafterReward-v1": +1 for each achievement unlocked for the first time, +-0.1 per health point gained or
lost). 17 discrete actions, 22 achievements; death terminates, ``max_episode_steps`` (default 10,000) truncates.

Score (``crafter_score_percent``, maximize): the canonical Crafter score. For each of the 22 achievements, its
success rate ``s_i`` is the percentage of the Evaluation's Episodes that unlocked it at least once; the score is
the shifted geometric mean ``exp(mean_i ln(1 + s_i)) - 1`` (0 to 100). An Episode the Policy failed (exception,
timeout, invalid action, ...) counts as an Episode that unlocked nothing; infra faults are left out. The score is
not a mean of per-Episode returns, so the spec declares no ``scoring`` rule (``projections.scoring`` knows only the
mean return): the Host records ``feedback()``'s score, and an audit (``evoledger replay``) reports the aggregates
as not recomputed; ``replay --execute`` still re-runs every recorded Episode and checks its return, status and
trajectory digest, and each Episode's achievements are in its recorded last-step metrics
(``achievements_mask``, bit ``i`` = :data:`~evoledger.benchmarks.crafter_env.ACHIEVEMENTS` ``[i]``), from which
the score can be recomputed by hand with :func:`crafter_score`.

Feedback: the score, the success rate of every achievement, outcome classes ``survived`` / ``died_<cause>`` (lava,
zombie, arrow, starvation, thirst, exhaustion, unknown: the likely cause judged from the last step), survival
steps, vitals at the end, action usage (fractions of all steps) and move reversals, per-Episode summaries and a
compact trace of the first Episodes (actions by name, rewards, vitals; symbolic observations, never images).

The long-horizon-survival profile of the catalogue is not implemented.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.benchmarks.crafter_env import ACHIEVEMENTS, ACTIONS, DEATH_CAUSES, GYMNASIUM_ID
from evoledger.benchmarks.feedback_summary import SCORE_DIGITS, summarize_episodes
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymEnvironment, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import (
    Artifact,
    BenchmarkPrograms,
    CatalogEntry,
    EpisodeRecord,
    EpisodeSpec,
    Extra,
    Feedback,
    Step,
)

__all__ = ["BENCHMARKS", "CATALOG", "EXTRA", "CrafterBenchmark", "CrafterConfig", "crafter_score"]

EXTRA: Final = Extra("crafter", ("crafter",))

DEFAULT_STEPS: Final = 10_000
TRACE_EPISODES: Final = 3
TRACE_STEPS: Final = 500

_OBSERVATIONS: Final = {
    "rgb": (
        "uint8 image [64, 64, 3] (height, width, RGB): the 9x7-cell local view around the player (at the centre) "
        "above a 9x2-cell strip showing the inventory"
    ),
    "local-symbolic": (
        "a dict: terrain uint8 [7, 9] (0 unknown/outside, 1 water, 2 grass, 3 stone, 4 path, 5 sand, 6 tree, 7 lava, "
        "8 coal, 9 iron, 10 diamond, 11 table, 12 furnace), entities uint8 [7, 9] (0 none, 1 player, 2 cow, "
        "3 zombie, 4 skeleton, 5-8 arrow flying left/right/up/down, 9 young plant, 10 ripe plant, 11 fence), the "
        "player at row 3, column 4 (rows grow downward = move_down, columns rightward = move_right); inventory: a "
        "dict of 16 counters 0..9 (health, food, drink, energy, sapling, wood, stone, coal, iron, diamond, "
        "wood/stone/iron_pickaxe, wood/stone/iron_sword); facing 0 left, 1 right, 2 up, 3 down; sleeping 0/1; "
        "daylight float32 in [0, 1]"
    ),
}


class CrafterConfig(GymConfig):
    """Configuration of a ``crafter/*`` Benchmark: the step limit (default 10,000, crafter's own)."""


def crafter_score(masks: Sequence[int]) -> float | None:
    """The Crafter score (percent) of Episodes given by their achievement bit masks; ``None`` without Episodes."""
    if not masks:
        return None
    rates = [100.0 * sum(1 for m in masks if m >> i & 1) / len(masks) for i in range(len(ACHIEVEMENTS))]
    return float(round(math.exp(math.fsum(math.log1p(r) for r in rates) / len(rates)) - 1.0, SCORE_DIGITS))


def _mask(record: EpisodeRecord) -> int:
    """The achievements an Episode unlocked (none when the Policy failed it)."""
    if record.status != "ok":
        return 0
    return int(record.final_metrics.get("achievements_mask", 0))


_EVIDENCE: Final = VisualEvidence(episodes=2, frames=12, tile_width=128)
"""Contact sheets of two training Episodes per Feedback: the frames crafter drew for the Policy's own steps."""


class CrafterBenchmark(GymBenchmark):
    """A Crafter Benchmark scored by the canonical Crafter score (see the module docstring)."""

    def __init__(self, task: GymTask, observation: str) -> None:
        self._observation_kind = observation
        super().__init__(task)
        self._spec = self._spec.model_copy(update={"scoring": None})

    def make_environment(self, episode: EpisodeSpec, **make_overrides: Any) -> GymEnvironment:
        return _CrafterEnvironment(self, episode, **make_overrides)

    def outcome(self, record: EpisodeRecord) -> str:
        if not record.terminated:
            return "survived"
        code = int(record.final_metrics.get("death_cause", DEATH_CAUSES.index("unknown")))
        return f"died_{DEATH_CAUSES[code] if 0 <= code < len(DEATH_CAUSES) else 'unknown'}"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        metrics = record.final_metrics
        notes = {"survival_steps": float(record.steps)}
        for key in ("achievements", "health", "food", "drink", "energy", "reversals"):
            if key in metrics:
                notes[key if key in ("achievements", "reversals") else f"final_{key}"] = float(metrics[key])
        return notes

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The Crafter score and what explains it (see the module docstring)."""
        base = summarize_episodes(
            benchmark_id=self.task.benchmark_id,
            primary_metric=self.task.primary_metric,
            score_rule=self.task.score_rule,
            failure_return=self.task.failure_return,
            records=records,
            outcome=self.outcome,
            notes=self.episode_notes,
        )
        counted = [r for r in records if r.status != "infra_fault"]
        masks = [_mask(r) for r in counted]
        score = crafter_score(masks)
        rates = {
            name: round(100.0 * sum(1 for m in masks if m >> i & 1) / len(masks), 3) if masks else None
            for i, name in enumerate(ACHIEVEMENTS)
        }
        usage: Counter[str] = Counter()
        for record in counted:
            if record.status == "ok":
                metrics = record.final_metrics
                usage.update({name: int(metrics.get(f"action_{name}", 0)) for name in ACTIONS})
        total = sum(usage.values())
        content = dict(base.content)
        returns = content.get("returns") or {}
        unlocked = ", ".join(f"{k} {v:g}%" for k, v in rates.items() if v) or "none"
        content.update(
            {
                "summary": (
                    f"{self.task.benchmark_id}: crafter_score_percent {score if score is not None else 'n/a'} over "
                    f"{len(records)} Episodes ({self.task.score_rule}); achievements unlocked (share of Episodes): "
                    f"{unlocked}; outcomes: "
                    + (", ".join(f"{k} {v}" for k, v in sorted(content["outcome_counts"].items())) or "none")
                    + f"; native return mean {returns.get('mean', 'n/a')}"
                ),
                "score": score,
                "achievement_success_percent": rates,
                "action_usage": {name: round(usage[name] / total, 4) for name in ACTIONS} if total else {},
            }
        )
        artifacts = [a for a in base.artifacts if a.name != "trace.jsonl"]
        trace = self._trace(records)
        if trace:
            artifacts.append(
                Artifact(name="trace.jsonl", media_type="application/x-ndjson", data=trace, retention="bulk")
            )
        return self.with_visual_evidence(Feedback(score=score, content=content, artifacts=tuple(artifacts)), records)

    def _trace(self, records: Sequence[EpisodeRecord]) -> bytes:
        """The first steps of the first Episodes with a trajectory: action names, rewards, vitals (no images)."""
        lines: list[str] = []
        traced = 0
        for position, record in enumerate(records):
            trajectory = record.trajectory
            if trajectory is None or traced == TRACE_EPISODES:
                continue
            traced += 1
            for t in range(min(trajectory.steps, TRACE_STEPS)):
                action = trajectory.actions[t]
                entry: dict[str, Any] = {
                    "episode": record.index,
                    "record": position,
                    "step": t,
                    "action": ACTIONS[action] if isinstance(action, int) and 0 <= action < len(ACTIONS) else action,
                    "reward": trajectory.rewards[t],
                    "metrics": dict(trajectory.metrics[t]) if t < len(trajectory.metrics) else {},
                }
                if self._observation_kind == "local-symbolic" and t < len(trajectory.observations):
                    entry["observation"] = trajectory.observations[t]
                lines.append(json.dumps(entry, sort_keys=True, separators=(",", ":"), default=_plain))
        return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


class _CrafterEnvironment(GymEnvironment):
    """A :class:`GymEnvironment` whose Steps carry the Episode's facts so far (``CrafterEnv.facts``) as metrics."""

    def step(self, action: Any) -> Step:
        step = super().step(action)
        return dataclasses.replace(step, metrics=dict(self._env.unwrapped.facts))


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    raise TypeError(f"cannot encode {type(value).__name__} in a trace")


def _make(name: str, observation: str, programs: BenchmarkPrograms, config: dict[str, Any]) -> CrafterBenchmark:
    EXTRA.require(name)
    cfg = CrafterConfig.model_validate(config)
    from evoledger.benchmarks.crafter_env import register

    register()
    steps = cfg.max_episode_steps or DEFAULT_STEPS
    rule = (
        "canonical Crafter score: exp(mean over the 22 achievements of ln(1 + success %)) - 1, success % = share of "
        "Episodes unlocking it; Episodes the Policy failed count as unlocking nothing; infra faults are left out"
    )
    return CrafterBenchmark(
        GymTask(
            benchmark_id=name,
            programs=programs,
            visual_evidence=_EVIDENCE,
            gymnasium_id=GYMNASIUM_ID,
            description=(
                "Crafter (crafter 1.8.3, CrafterReward-v1): survive in a procedurally generated 64x64 world and "
                "unlock achievements (collect wood, place a table, make tools, drink water, eat, sleep, fight "
                "zombies and skeletons, mine stone, coal, iron and diamonds). "
                f"Observation: {_OBSERVATIONS[observation]}. "
                "Actions: Discrete(17) " + ", ".join(f"{i} {a}" for i, a in enumerate(ACTIONS)) + " ('do' "
                "collects, attacks or drinks in front of the player; moving into an obstacle only turns). Reward: +1 "
                "per achievement unlocked for the first time, +-0.1 per health point gained or lost. Death (health 0) "
                f"terminates; Episodes are truncated after {steps} steps. Health drops when food, drink or energy "
                "reach 0; lava kills. Score (crafter_score_percent, maximize): the " + rule + "."
            ),
            primary_metric="crafter_score_percent",
            score_rule=rule,
            failure_return=0.0,
            max_episode_steps=steps,
            env_kwargs={"observation": observation, "length": steps},
            public_parameters={"area": [64, 64], "view": [9, 9], "size": [64, 64], "reward": True},
            metadata={
                "source": "crafter",
                "crafter_version": _version(),
                "achievements": list(ACHIEVEMENTS),
                "actions": list(ACTIONS),
            },
        ),
        observation,
    )


def _version() -> str:
    from importlib.metadata import version

    return version("crafter")


def make_achievement_score(**config: Any) -> CrafterBenchmark:
    """``crafter/achievement-score``: RGB observations, canonical Crafter score."""
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "crafter-baseline", heuristic=PROGRAMS_DIR / "crafter-rgb-heuristic"
    )
    return _make("crafter/achievement-score", "rgb", programs, config)


def make_achievement_score_symbolic(**config: Any) -> CrafterBenchmark:
    """``crafter/achievement-score-symbolic``: local symbolic observations, canonical Crafter score."""
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "crafter-baseline", heuristic=PROGRAMS_DIR / "crafter-symbolic-heuristic"
    )
    return _make("crafter/achievement-score-symbolic", "local-symbolic", programs, config)


make_achievement_score.config_model = CrafterConfig  # type: ignore[attr-defined]
make_achievement_score_symbolic.config_model = CrafterConfig  # type: ignore[attr-defined]

BENCHMARKS: Final = {
    "crafter/achievement-score": make_achievement_score,
    "crafter/achievement-score-symbolic": make_achievement_score_symbolic,
}
CATALOG: Final = (
    CatalogEntry(
        name="crafter/achievement-score",
        family="crafter",
        summary="Crafter (RGB 64x64 observations): unlock the 22 achievements; canonical Crafter score",
        extra=EXTRA,
    ),
    CatalogEntry(
        name="crafter/achievement-score-symbolic",
        family="crafter",
        summary="Crafter (local symbolic dict observations): unlock the 22 achievements; canonical Crafter score",
        extra=EXTRA,
    ),
)
