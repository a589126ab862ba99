"""``atcoder/ahc058-apple-incremental-game``: AtCoder AHC058 A "Apple Incremental Game" as a Benchmark.

The rules, the case generator and the score are in :mod:`~evoledger.benchmarks.ahc058_game`; Episode planning,
the Benchmark object and the Feedback frame in :mod:`~evoledger.benchmarks.contest_benchmark`. Pure Python, no
extra.

* Observation (a :class:`~evoledger.kernel.authoring.JsonSpace`): ``{"turn", "turns_remaining", "apples",
  "machines" (B, 4 x 10 lists), "powers" (P, 4 x 10), "initial"}``; ``initial`` is ``{"capacities": A (10),
  "costs": C (4 x 10)}`` in the first observation and ``None`` after it. Apples and machine counts are exact Python
  integers (they outgrow 64 bits in strong play; the wire carries them exactly).
* Action: ``None`` (wait) or ``{"upgrade": [level, machine]}`` (a list or a tuple). An upgrade that costs more than
  the apples held rejects the Action: the Episode ends as a Policy failure (``invalid_action``), scoring 0.
* Reward: 0 on turns 1 to 499, the case's score ``round(100_000 * log2(apples))`` on turn 500 (the Episode
  terminates). Benchmark score: the mean over Episodes, failed Episodes 0 (metric ``mean_log2_score``).
* Feedback: mean score, mean final apples (log10), upgrades, apples spent and produced (log10), production rate,
  wait fraction, mean affordable-upgrade count; ``trace.jsonl`` holds at most 2,000 turns of at most 4 Episodes
  (cost paid, balance, production, the score if the game ended now, the cheapest affordable upgrade).
* Programs: the baseline of the reference harness (buys ``(0, 0)``, then the best benefit / cost upgrade by a
  horizon factor ``comb(remaining, level + 1)`` costing at most half the apples, else waits) and a tunable heuristic
  (the upgrade that most raises the apples the game would end with if nothing more were bought).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.ahc058_game import LEVELS, MACHINES, TURNS, AppleGame, IllegalUpgrade, final_score
from evoledger.benchmarks.ahc058_game import generate_case as generate_apple_case
from evoledger.benchmarks.contest_benchmark import (
    Contest,
    ContestBenchmark,
    ContestConfig,
    jsonl_bytes,
    mean_or_none,
)
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, InvalidAction, JsonSpace, Step

__all__ = ["ACTION_SCHEMA", "BENCHMARKS", "CATALOG", "OBSERVATION_SCHEMA", "AppleEnvironment", "make_ahc058"]

NAME: Final = "atcoder/ahc058-apple-incremental-game"
TRACE_EPISODES: Final = 4
TRACE_TURNS: Final = 2_000


def _matrix(item: dict[str, Any]) -> dict[str, Any]:
    row = {"type": "array", "prefixItems": [item] * MACHINES}
    return {"type": "array", "prefixItems": [row] * LEVELS}


_TURN: Final = {"type": "integer", "minimum": 0, "maximum": TURNS}
OBSERVATION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "turn": _TURN,
        "turns_remaining": _TURN,
        "apples": {"type": "integer", "minimum": 0},
        "machines": _matrix({"type": "integer", "minimum": 1}),
        "powers": _matrix({"type": "integer", "minimum": 0, "maximum": TURNS}),
        "initial": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "properties": {
                        "capacities": {
                            "type": "array",
                            "prefixItems": [{"type": "integer", "minimum": 1, "maximum": 100}] * MACHINES,
                        },
                        "costs": _matrix({"type": "integer", "minimum": 1}),
                    },
                },
            ]
        },
    },
}
ACTION_SCHEMA: Final = {
    "anyOf": [
        {"type": "null"},
        {
            "type": "object",
            "properties": {
                "upgrade": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "integer", "minimum": 0, "maximum": LEVELS - 1},
                        {"type": "integer", "minimum": 0, "maximum": MACHINES - 1},
                    ],
                }
            },
        },
    ]
}
_ACTION_SPACE: Final = JsonSpace(ACTION_SCHEMA)


def _log10(value: int) -> float:
    return math.log10(value) if value > 0 else 0.0


class AppleEnvironment:
    """One case of the Apple Incremental Game (see the module docstring)."""

    def __init__(self, case_seed: int) -> None:
        self._case_seed = case_seed
        self._game: AppleGame | None = None

    def reset(self) -> dict[str, Any]:
        self._game = AppleGame(generate_apple_case(self._case_seed))
        return self._observation(initial=True)

    def _observation(self, *, initial: bool) -> dict[str, Any]:
        game = self._playing()
        return {
            "turn": game.turn,
            "turns_remaining": TURNS - game.turn,
            "apples": game.apples,
            "machines": [list(row) for row in game.counts],
            "powers": [list(row) for row in game.powers],
            "initial": (
                {"capacities": list(game.case.capacities), "costs": [list(row) for row in game.case.costs]}
                if initial
                else None
            ),
        }

    def _playing(self) -> AppleGame:
        if self._game is None:
            raise RuntimeError("step() or legal_action() called before reset()")
        return self._game

    def step(self, action: Any) -> Step:
        game = self._playing()
        if game.done:
            raise RuntimeError("step() called after the game ended")
        if not _ACTION_SPACE.contains(action):
            raise InvalidAction(
                f"action {action!r:.120} is neither None (wait) nor {{'upgrade': [level 0-3, machine 0-9]}}"
            )
        upgrade = None if action is None else (int(action["upgrade"][0]), int(action["upgrade"][1]))
        try:
            cost, gained = game.play(upgrade)
        except IllegalUpgrade as exc:
            raise InvalidAction(f"turn {game.turn}: {exc}; wait (None) or pick an affordable upgrade") from None
        cheapest = game.cheapest_affordable()
        score_now = final_score(game.apples)
        metrics = {
            "cost": float(cost),
            "apples_log10": _log10(game.apples),
            "produced": float(gained),
            "score_if_ended": float(score_now),
            "cheapest_affordable": float(cheapest) if cheapest is not None else -1.0,
            "upgrades": float(game.upgrades),
            "spent_log10": _log10(game.spent),
            "produced_log10": _log10(game.produced),
        }
        return Step(
            self._observation(initial=False),
            float(score_now) if game.done else 0.0,
            game.done,
            False,
            metrics,
        )

    def legal_action(self, rng: np.random.Generator) -> Any:
        """A random legal action: an affordable upgrade half of the time when there is one, else wait."""
        game = self._playing()
        affordable = [
            [level, j] for level in range(LEVELS) for j in range(MACHINES) if game.upgrade_cost(level, j) <= game.apples
        ]
        if affordable and rng.random() < 0.5:
            return {"upgrade": affordable[int(rng.integers(len(affordable)))]}
        return None

    def close(self) -> None:
        self._game = None


def _trace(records: Sequence[EpisodeRecord]) -> bytes:
    rows: list[dict[str, Any]] = []
    traced = 0
    for record in records:
        trajectory = record.trajectory
        if trajectory is None or traced == TRACE_EPISODES:
            continue
        traced += 1
        for t in range(min(trajectory.steps, TRACE_TURNS - len(rows))):
            metrics = trajectory.metrics[t] if t < len(trajectory.metrics) else {}
            action = trajectory.actions[t]
            rows.append(
                {
                    "episode": record.index,
                    "turn": t + 1,
                    "upgrade": action.get("upgrade") if isinstance(action, dict) else None,
                    **{k: metrics[k] for k in sorted(metrics) if k != "upgrades"},
                }
            )
        if len(rows) >= TRACE_TURNS:
            break
    return jsonl_bytes(rows)


def _summary(records: Sequence[EpisodeRecord]) -> tuple[dict[str, Any], bytes]:
    finished = [r for r in records if r.status == "ok"]
    finals = [r.final_metrics for r in finished]
    waits: list[float] = []
    affordable: list[float] = []
    for record in records:
        trajectory = record.trajectory
        if trajectory is not None and trajectory.steps:
            waits.append(sum(1 for a in trajectory.actions if a is None) / trajectory.steps)
            affordable.append(
                sum(1 for m in trajectory.metrics if m.get("cheapest_affordable", -1.0) >= 0) / trajectory.steps
            )
    summary = {
        "mean_final_apples_log10": mean_or_none([float(m.get("apples_log10", 0.0)) for m in finals]),
        "mean_upgrades": mean_or_none([float(m.get("upgrades", 0.0)) for m in finals]),
        "mean_spent_log10": mean_or_none([float(m.get("spent_log10", 0.0)) for m in finals]),
        "mean_produced_log10": mean_or_none([float(m.get("produced_log10", 0.0)) for m in finals]),
        "mean_production_rate_log10": mean_or_none(
            [float(m.get("produced_log10", 0.0)) - math.log10(TURNS) for m in finals]
        ),
        "wait_fraction": mean_or_none(waits),
        "affordable_turn_fraction": mean_or_none(affordable),
        "how_to_read": (
            "apples are given as log10 (they outgrow 64 bits); the per-Episode score is round(100000 * log2(apples))"
            " after turn 500; an unaffordable upgrade ends the Episode as invalid_action (score 0); trace.jsonl: "
            "per turn the upgrade bought, its cost, apples (log10), production, the score if the game ended now and"
            " the cheapest affordable upgrade (-1: none)"
        ),
    }
    return summary, _trace(records)


def make_ahc058(**config: Any) -> ContestBenchmark:
    """AtCoder AHC058 A Apple Incremental Game: buy machine upgrades for 500 turns; score log2 of the apples."""
    ContestConfig(**config)
    return ContestBenchmark(
        Contest(
            name=NAME,
            upstream_id="atcoder/AHC058/AppleIncrementalGame/mean-log2-score-v1",
            leaf="apple-incremental-game",
            description=(
                "AtCoder AHC058 A 'Apple Incremental Game' (independent simulator): 10 machines x 4 levels, 500 "
                "turns; each turn upgrade one machine power you can afford or wait; level-0 machines make apples, "
                "higher levels make machines of the level below. Score per case: round(100000 * log2(final apples))."
            ),
            observation_space=JsonSpace(OBSERVATION_SCHEMA),
            action_space=_ACTION_SPACE,
            max_episode_steps=TURNS,
            primary_metric="mean_log2_score",
            failure_score=0.0,
            environment=AppleEnvironment,
            summary=_summary,
            programs=shipped("ahc058", tunable="ahc058-heuristic"),
            metadata={"contest": "AtCoder Heuristic Contest 058 A", "generator": "evopolicygym-independent-v1"},
            parameters={"levels": LEVELS, "machines": MACHINES, "turns": TURNS, "starting_apples": 1},
        )
    )


BENCHMARKS = {NAME: make_ahc058}

CATALOG = (
    CatalogEntry(NAME, "atcoder", "AtCoder AHC058 A Apple Incremental Game (pure-Python simulator); log2 apples"),
)
"""The catalogue row (family ``atcoder``, no extra)."""
