"""Crafter (crafter 1.8.3) as Benchmarks: two reward profiles, ``crafter/achievement-score`` and
``crafter/long-horizon-survival``, each with RGB observations and a ``-symbolic`` (local symbolic) variant.

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

``crafter/long-horizon-survival`` (RGB) and ``-symbolic`` (local symbolic) play the same world with the
long-horizon-survival reward profile (:mod:`evoledger.benchmarks.crafter_survival`): the reward is a survival credit
per step alive and healthy plus a secondary credit for first unlocks, capped productive repeats and capped upkeep
(drinking, eating); the score (``long_horizon_survival_score``, maximize) is ``0.75 * mean(survival part) + 0.25 *
mean(the lowest quarter of survival parts) + mean(secondary part)``; a failed Episode counts 0 for both parts.
Feedback adds the components, the share of Episodes alive at 150/200/250/300/400 steps, mean vitals by age band
and the canonical Crafter score as a diagnostic. Its spec also declares no ``scoring`` rule (the score is not a
mean of returns); each Episode's parts are in its last-step metrics (``lhs_survival``, ``lhs_secondary``), from
which :func:`~evoledger.benchmarks.crafter_survival.survival_score` recomputes it.
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
from evoledger.benchmarks.crafter_env import ACHIEVEMENTS, ACTIONS, AGE_BANDS, DEATH_CAUSES, GYMNASIUM_ID
from evoledger.benchmarks.crafter_survival import SURVIVAL_THRESHOLDS, survival_score
from evoledger.benchmarks.feedback_summary import SCORE_DIGITS, summarize_episodes
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymStep, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import (
    Artifact,
    BenchmarkPrograms,
    CatalogEntry,
    EpisodeRecord,
    Extra,
    Feedback,
)

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "EXTRA",
    "CrafterBenchmark",
    "CrafterConfig",
    "CrafterSurvivalBenchmark",
    "crafter_score",
]

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

    def simulation_metrics(self, step: GymStep) -> dict[str, float]:
        """The Episode's facts so far (``CrafterEnv.facts``)."""
        return dict(step.env.facts)

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


class CrafterSurvivalBenchmark(CrafterBenchmark):
    """A Crafter Benchmark scored by the long-horizon-survival score (see the module docstring)."""

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        notes = super().episode_notes(record)
        metrics = record.final_metrics
        for key in ("lhs_survival", "lhs_secondary", "lhs_unlocks", "lhs_repeats", "lhs_maintenance"):
            if key in metrics:
                notes[key] = float(metrics[key])
        return notes

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The long-horizon-survival score, its components, survival rates, vitals by age and the Crafter score."""
        canonical = super().feedback(records)
        counted = [r for r in records if r.status != "infra_fault"]
        parts = [_parts(r) for r in counted]
        score = survival_score(parts, SCORE_DIGITS)
        content = dict(canonical.content)
        crafter = content.pop("score")
        lived = [r.steps if r.status == "ok" else 0 for r in counted]
        survival_rates = {
            str(n): round(sum(1 for s in lived if s >= n) / len(lived), 4) if lived else None
            for n in SURVIVAL_THRESHOLDS
        }
        k = max(1, math.ceil(0.25 * len(parts))) if parts else 0
        components = {
            "mean_survival": _mean([p[0] for p in parts]),
            f"mean_survival_lowest_{k}": _mean(sorted(p[0] for p in parts)[:k]),
            "mean_secondary": _mean([p[1] for p in parts]),
            "mean_unlocks": _mean([_metric(r, "lhs_unlocks") for r in counted]),
            "mean_repeats": _mean([_metric(r, "lhs_repeats") for r in counted]),
            "mean_maintenance": _mean([_metric(r, "lhs_maintenance") for r in counted]),
        }
        content.update(
            {
                "summary": (
                    f"{self.task.benchmark_id}: long_horizon_survival_score "
                    f"{score if score is not None else 'n/a'} over {len(records)} Episodes (0.75 mean survival "
                    f"{components['mean_survival']} + 0.25 lowest-{k} survival "
                    f"{components[f'mean_survival_lowest_{k}']} + secondary {components['mean_secondary']}); "
                    "alive at 150/200/250/300/400 steps: "
                    + "/".join("n/a" if v is None else f"{100 * v:g}%" for v in survival_rates.values())
                    + "; outcomes: "
                    + (", ".join(f"{k} {v}" for k, v in sorted(content["outcome_counts"].items())) or "none")
                    + f"; canonical crafter_score_percent {crafter if crafter is not None else 'n/a'}"
                ),
                "score": score,
                "components": components,
                "survival_rate_at_steps": survival_rates,
                "vitals_by_age": _vitals_by_age(counted),
                "crafter_score_percent": crafter,
            }
        )
        return dataclasses.replace(canonical, score=score, content=content)


def _parts(record: EpisodeRecord) -> tuple[float, float]:
    """An Episode's (survival, secondary) parts; (0, 0) when the Policy failed it."""
    if record.status != "ok":
        return 0.0, 0.0
    return _metric(record, "lhs_survival"), _metric(record, "lhs_secondary")


def _metric(record: EpisodeRecord, key: str) -> float:
    return float(record.final_metrics.get(key, 0.0)) if record.status == "ok" else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return round(math.fsum(values) / len(values), SCORE_DIGITS) if values else None


def _vitals_by_age(records: Sequence[EpisodeRecord]) -> dict[str, dict[str, float | int]]:
    """Mean health/food/drink/energy per age band over the Episodes that reached the band."""
    out: dict[str, dict[str, float | int]] = {}
    for low, high in AGE_BANDS:
        rows = [r.final_metrics for r in records if r.status == "ok" and f"band_{low}_health" in r.final_metrics]
        if not rows:
            continue
        label = f"steps_{low + 1}_{high}" if high is not None else f"steps_{low + 1}_on"
        band: dict[str, float | int] = {"episodes": len(rows)}
        for vital in ("health", "food", "drink", "energy"):
            band[vital] = round(math.fsum(float(m[f"band_{low}_{vital}"]) for m in rows) / len(rows), 3)
        out[label] = band
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    raise TypeError(f"cannot encode {type(value).__name__} in a trace")


_CANONICAL_RULE: Final = (
    "canonical Crafter score: exp(mean over the 22 achievements of ln(1 + success %)) - 1, success % = share of "
    "Episodes unlocking it; Episodes the Policy failed count as unlocking nothing; infra faults are left out"
)
_SURVIVAL_RULE: Final = (
    "long-horizon-survival score: 0.75 * mean(survival part) + 0.25 * mean(the lowest k = max(1, ceil(N/4)) survival "
    "parts) + mean(secondary part) over the N Episodes; Episodes the Policy failed count 0 for both parts; infra "
    "faults are left out"
)
_SURVIVAL_REWARD: Final = (
    "Reward (the long-horizon-survival credit; the Episode return is its survival part plus its secondary part): "
    "survival part, per step: 0.01 while alive after the step (0 on the step the player dies) + 0.03 * "
    "min(health, food, drink) / 9 while alive; secondary part: the first unlock of an achievement pays 0.1 * "
    "log2(1 + weight) (collect_diamond 1024; make_iron_pickaxe, make_iron_sword 256; collect_iron 64; "
    "defeat_skeleton, make_stone_pickaxe, make_stone_sword, place_furnace 32; collect_coal, collect_stone, "
    "defeat_zombie, place_stone 16; eat_plant, make_wood_pickaxe, make_wood_sword 8; place_plant, place_table 4; "
    "collect_drink, collect_sapling, collect_wood, eat_cow, wake_up 1); a repeat pays 20 % of that unlock credit, "
    "at most wood 6, sapling 3, stone 6, coal 3, iron 2, diamond 1, zombie 2, skeleton 1, place_plant 3 repeats "
    "within any 300 consecutive steps; upkeep pays at most 0.6 for drink and 0.6 for food within any 300 steps: "
    "0.04 per drink (15 at most), 0.05 per food unit (12 at most; a cow is 6 units, a plant 4). "
)


def _make(
    name: str,
    observation: str,
    programs: BenchmarkPrograms,
    config: dict[str, Any],
    profile: str = "achievement-score",
) -> CrafterBenchmark:
    """A Benchmark of one reward profile and one observation (see the module docstring)."""
    EXTRA.require(name)
    cfg = CrafterConfig.model_validate(config)
    from evoledger.benchmarks.crafter_env import register

    register()
    steps = cfg.max_episode_steps or DEFAULT_STEPS
    if profile == "long-horizon-survival":
        return CrafterSurvivalBenchmark(
            GymTask(
                benchmark_id=name,
                programs=programs,
                visual_evidence=_EVIDENCE,
                gymnasium_id=GYMNASIUM_ID,
                description=(
                    "Crafter (crafter 1.8.3), long-horizon-survival profile: stay alive and healthy as long as "
                    "possible in a procedurally generated 64x64 world (drink water, eat cows and plants, sleep, "
                    "avoid lava, fight or flee zombies and skeletons), with a smaller credit for progress "
                    "(collect wood, place a table, make tools, mine stone, coal, iron and diamonds). "
                    f"Observation: {_OBSERVATIONS[observation]}. "
                    "Actions: Discrete(17) " + ", ".join(f"{i} {a}" for i, a in enumerate(ACTIONS)) + " ('do' "
                    "collects, attacks or drinks in front of the player; moving into an obstacle only turns). "
                    + _SURVIVAL_REWARD
                    + f"Death (health 0) terminates; Episodes are truncated after {steps} steps. Health drops when "
                    "food, drink or energy reach 0 and recovers while they are not; lava kills. Score "
                    "(long_horizon_survival_score, maximize): the " + _SURVIVAL_RULE + "."
                ),
                primary_metric="long_horizon_survival_score",
                score_rule=_SURVIVAL_RULE,
                failure_return=0.0,
                max_episode_steps=steps,
                env_kwargs={"observation": observation, "length": steps, "profile": profile},
                public_parameters=_public_parameters(),
                metadata=_metadata(),
            ),
            observation,
        )
    rule = _CANONICAL_RULE
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
            public_parameters=_public_parameters(),
            metadata=_metadata(),
        ),
        observation,
    )


def _public_parameters() -> dict[str, Any]:
    """The world's public parameters, the same for every Crafter Benchmark."""
    return {"area": [64, 64], "view": [9, 9], "size": [64, 64], "reward": True}


def _metadata() -> dict[str, Any]:
    """The public metadata of every Crafter Benchmark: its source, version, achievements and actions."""
    return {
        "source": "crafter",
        "crafter_version": _version(),
        "achievements": list(ACHIEVEMENTS),
        "actions": list(ACTIONS),
    }


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


def make_long_horizon_survival(**config: Any) -> CrafterBenchmark:
    """``crafter/long-horizon-survival``: RGB observations, long-horizon-survival score."""
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "crafter-baseline", heuristic=PROGRAMS_DIR / "crafter-rgb-heuristic"
    )
    return _make("crafter/long-horizon-survival", "rgb", programs, config, "long-horizon-survival")


def make_long_horizon_survival_symbolic(**config: Any) -> CrafterBenchmark:
    """``crafter/long-horizon-survival-symbolic``: local symbolic observations, long-horizon-survival score."""
    programs = BenchmarkPrograms(
        baseline=PROGRAMS_DIR / "crafter-baseline", heuristic=PROGRAMS_DIR / "crafter-symbolic-survivor"
    )
    return _make("crafter/long-horizon-survival-symbolic", "local-symbolic", programs, config, "long-horizon-survival")


make_achievement_score.config_model = CrafterConfig  # type: ignore[attr-defined]
make_achievement_score_symbolic.config_model = CrafterConfig  # type: ignore[attr-defined]
make_long_horizon_survival.config_model = CrafterConfig  # type: ignore[attr-defined]
make_long_horizon_survival_symbolic.config_model = CrafterConfig  # type: ignore[attr-defined]

BENCHMARKS: Final = {
    "crafter/achievement-score": make_achievement_score,
    "crafter/achievement-score-symbolic": make_achievement_score_symbolic,
    "crafter/long-horizon-survival": make_long_horizon_survival,
    "crafter/long-horizon-survival-symbolic": make_long_horizon_survival_symbolic,
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
    CatalogEntry(
        name="crafter/long-horizon-survival",
        family="crafter",
        summary="Crafter (RGB 64x64 observations): stay alive and healthy for long; long-horizon-survival score",
        extra=EXTRA,
    ),
    CatalogEntry(
        name="crafter/long-horizon-survival-symbolic",
        family="crafter",
        summary="Crafter (local symbolic dict observations): stay alive and healthy for long; long-horizon-survival "
        "score",
        extra=EXTRA,
    ),
)
