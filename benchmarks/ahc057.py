"""``atcoder/ahc057-molecules``: AtCoder AHC057 A "Molecules" as a Benchmark.

The rules, the case generator and the score are in :mod:`~evoledger.benchmarks.ahc057_game`; Episode planning,
the Benchmark object and the Feedback frame in :mod:`~evoledger.benchmarks.contest_benchmark`. Pure Python and
numpy, no extra.

* Observation (a :class:`~evoledger.kernel.authoring.JsonSpace`): ``{"turn", "turns_remaining", "positions",
  "velocities", "components", "component_count", "total_cost", "initial"}``. ``positions`` and ``velocities`` are
  float64 numpy arrays of shape (300, 2) (the component velocity of each point), ``components`` an int64 array of
  300 (the smallest point index of each point's component): numpy arrays rather than the reference harness's
  lists, so that an observation is a few kilobytes of raw bytes on the wire and in recorded trajectories, not 1,500
  Python objects (``positions[i][0]``, ``len()`` and iteration work on both). ``initial`` is ``{"space_size",
  "target_components", "target_size", "turns"}`` in the first observation and ``None`` after it.
* Action: ``{"bonds": [[i, j], ...]}`` (at most 290 pairs of point indices; ``[]`` just lets time pass). A set that
  breaks a rule (see the rules module) rejects the Action: the Episode ends as a Policy failure (``invalid_action``),
  scoring 0. So does reaching the last turn without the 10 x 30 partition.
* Reward: 0 on turns 1 to 999, the case's score ``round(1e6 * log2(L * 290 / (total_cost + 1)))`` on turn 1,000
  (the Episode terminates). Benchmark score: the mean over Episodes, failed Episodes 0 (``mean_log_cost_score``).
* Feedback: mean score, mean total cost, bonds, cost per bond, the largest bond cost, the fraction of empty turns,
  the first turn the 10 x 30 partition was complete; ``trace.jsonl`` holds at most 256 bond events of at most 4
  Episodes (turn, points, cost).
* Programs: the reference harness's baseline (on turn 0, bond consecutive blocks 0-29, 30-59, ...: always
  complete, then wait) and a tunable heuristic (groups of 30 neighbours along a Hilbert curve, each bonded along its
  minimum spanning tree at the turn its points are closest).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.ahc057_game import (
    COMPONENT_SIZE,
    COMPONENTS,
    MAX_SPEED,
    POINTS,
    SIDE,
    TURNS,
    IllegalBonds,
    MoleculesGame,
    case_score,
    toroidal_distance,
)
from evoledger.benchmarks.ahc057_game import generate_case as generate_molecules_case
from evoledger.benchmarks.contest_benchmark import (
    Contest,
    ContestBenchmark,
    ContestConfig,
    jsonl_bytes,
    mean_or_none,
)
from evoledger.benchmarks.contest_stream import nearest
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, InvalidAction, JsonSpace, Step

__all__ = ["ACTION_SCHEMA", "BENCHMARKS", "CATALOG", "OBSERVATION_SCHEMA", "MoleculesEnvironment", "make_ahc057"]

NAME: Final = "atcoder/ahc057-molecules"
MAX_BONDS: Final = POINTS - COMPONENTS
TRACE_EPISODES: Final = 4
TRACE_BONDS: Final = 256

_TURN: Final = {"type": "integer", "minimum": 0, "maximum": TURNS}
_POINT: Final = {"type": "integer", "minimum": 0, "maximum": POINTS - 1}
OBSERVATION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "turn": _TURN,
        "turns_remaining": _TURN,
        "positions": {"type": "ndarray", "dtype": "float64", "shape": [POINTS, 2], "minimum": 0, "maximum": SIDE},
        "velocities": {
            "type": "ndarray",
            "dtype": "float64",
            "shape": [POINTS, 2],
            "minimum": -MAX_SPEED,
            "maximum": MAX_SPEED,
        },
        "components": {"type": "ndarray", "dtype": "int64", "shape": [POINTS], "minimum": 0, "maximum": POINTS - 1},
        "component_count": {"type": "integer", "minimum": COMPONENTS, "maximum": POINTS},
        "total_cost": {"type": "integer", "minimum": 0},
        "initial": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "properties": {
                        "space_size": {"type": "integer", "minimum": SIDE, "maximum": SIDE},
                        "target_components": {"type": "integer", "minimum": COMPONENTS, "maximum": COMPONENTS},
                        "target_size": {"type": "integer", "minimum": COMPONENT_SIZE, "maximum": COMPONENT_SIZE},
                        "turns": {"type": "integer", "minimum": TURNS, "maximum": TURNS},
                    },
                },
            ]
        },
    },
}
ACTION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "bonds": {
            "type": "array",
            "items": {"type": "array", "items": _POINT, "minItems": 2, "maxItems": 2},
            "maxItems": MAX_BONDS,
        }
    },
}
_ACTION_SPACE: Final = JsonSpace(ACTION_SCHEMA)
_INITIAL: Final = {
    "space_size": SIDE,
    "target_components": COMPONENTS,
    "target_size": COMPONENT_SIZE,
    "turns": TURNS,
}


class MoleculesEnvironment:
    """One case of Molecules (see the module docstring)."""

    def __init__(self, case_seed: int) -> None:
        self._case_seed = case_seed
        self._game: MoleculesGame | None = None

    def reset(self) -> dict[str, Any]:
        self._game = MoleculesGame(generate_molecules_case(self._case_seed))
        return self._observation(initial=True)

    def _playing(self) -> MoleculesGame:
        if self._game is None:
            raise RuntimeError("step() or legal_action() called before reset()")
        return self._game

    def _observation(self, *, initial: bool) -> dict[str, Any]:
        game = self._playing()
        return {
            "turn": game.turn,
            "turns_remaining": TURNS - game.turn,
            **game.observation_arrays(),
            "component_count": game.component_count,
            "total_cost": game.total_cost,
            "initial": dict(_INITIAL) if initial else None,
        }

    def step(self, action: Any) -> Step:
        game = self._playing()
        if game.done:
            raise RuntimeError("step() called after the game ended")
        if not _ACTION_SPACE.contains(action):
            raise InvalidAction(
                f"action {action!r:.120} is not {{'bonds': [[i, j], ...]}} with at most {MAX_BONDS} pairs of point "
                f"indices 0-{POINTS - 1}"
            )
        turn = game.turn
        bonds = [(int(i), int(j)) for i, j in action["bonds"]]
        try:
            costs = game.play(bonds)
        except IllegalBonds as exc:
            raise InvalidAction(f"turn {turn}: {exc}; the whole set of bonds is rejected") from None
        metrics = {
            "bonds": float(len(costs)),
            "turn_cost": float(sum(costs)),
            "max_bond_cost": float(max(costs, default=0)),
            "total_cost": float(game.total_cost),
            "component_count": float(game.component_count),
        }
        reward = float(case_score(game.total_cost)) if game.done else 0.0
        return Step(self._observation(initial=False), reward, game.done, False, metrics)

    def legal_action(self, rng: np.random.Generator) -> Any:
        """A random legal action: bonds inside the blocks 0-29, 30-59, ... (so the partition can always complete),
        now and then one at random, and on the last turn every bond the blocks still need."""
        game = self._playing()
        roots = game.components
        if game.turn == TURNS - 1:
            needed = []
            for start in range(0, POINTS, COMPONENT_SIZE):
                block = roots[start : start + COMPONENT_SIZE]
                for other in sorted(set(block.tolist()) - {int(block[0])}):
                    needed.append([start, other])
            return {"bonds": needed}
        if rng.random() < 0.9:
            return {"bonds": []}
        i = int(rng.integers(POINTS))
        start = i - i % COMPONENT_SIZE
        j = start + int(rng.integers(COMPONENT_SIZE))
        return {"bonds": [] if roots[i] == roots[j] else [[i, j]]}

    def close(self) -> None:
        self._game = None


def _bond_events(record: EpisodeRecord, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` bonds of the Episode, each with its cost from the recorded positions of its turn."""
    trajectory = record.trajectory
    events: list[dict[str, Any]] = []
    if trajectory is None:
        return events
    for t in range(min(trajectory.steps, len(trajectory.observations))):
        action = trajectory.actions[t]
        bonds = action.get("bonds") if isinstance(action, dict) else None
        if not bonds:
            continue
        positions = np.asarray(trajectory.observations[t]["positions"], dtype=np.float64)
        for i, j in sorted((min(int(a), int(b)), max(int(a), int(b))) for a, b in bonds):
            cost = nearest(toroidal_distance(positions[i], positions[j]))
            events.append({"episode": record.index, "turn": t, "i": i, "j": j, "cost": cost})
            if len(events) >= limit:
                return events
    return events


def _first_ready_turn(record: EpisodeRecord) -> int | None:
    trajectory = record.trajectory
    if trajectory is None:
        return None
    for t, metrics in enumerate(trajectory.metrics):
        if metrics.get("component_count") == COMPONENTS:
            return t
    return None


def _summary(records: Sequence[EpisodeRecord]) -> tuple[dict[str, Any], bytes]:
    finished = [r.final_metrics for r in records if r.status == "ok"]
    bonds = [float(m.get("total_cost", 0.0)) for m in finished]
    counts: list[float] = []
    largest: list[float] = []
    empty: list[float] = []
    ready: list[float] = []
    for record in records:
        trajectory = record.trajectory
        if trajectory is None or not trajectory.steps:
            continue
        counts.append(sum(float(m.get("bonds", 0.0)) for m in trajectory.metrics))
        largest.append(max((float(m.get("max_bond_cost", 0.0)) for m in trajectory.metrics), default=0.0))
        empty.append(sum(1 for m in trajectory.metrics if not m.get("bonds")) / trajectory.steps)
        turn = _first_ready_turn(record)
        if turn is not None:
            ready.append(float(turn))
    total_bonds = sum(counts)
    events: list[dict[str, Any]] = []
    for record in [r for r in records if r.trajectory is not None][:TRACE_EPISODES]:
        events.extend(_bond_events(record, TRACE_BONDS - len(events)))
        if len(events) >= TRACE_BONDS:
            break
    summary = {
        "mean_total_cost": mean_or_none(bonds),
        "mean_bonds": mean_or_none(counts),
        "cost_per_bond": sum(float(m.get("total_cost", 0.0)) for m in finished) / total_bonds if total_bonds else None,
        "max_bond_cost": max(largest, default=None),
        "empty_turn_fraction": mean_or_none(empty),
        "mean_first_complete_turn": mean_or_none(ready),
        "how_to_read": (
            "per-Episode score = round(1e6 * log2(100000 * 290 / (total_cost + 1))) on turn 1000; a rejected set of "
            "bonds, or no 10 x 30 partition on the last turn (index 999), ends the Episode as invalid_action (score "
            "0); first_complete_turn is the turn index after whose bonds the 10 x 30 partition stood; trace.jsonl: "
            "bond events (turn index, points, cost)"
        ),
    }
    return summary, jsonl_bytes(events)


def make_ahc057(**config: Any) -> ContestBenchmark:
    """AtCoder AHC057 A Molecules: bond 300 drifting points into 10 molecules of 30 at the least total distance."""
    ContestConfig(**config)
    return ContestBenchmark(
        Contest(
            name=NAME,
            upstream_id="atcoder/AHC057/Molecules/mean-log-cost-score-v1",
            leaf="molecules",
            description=(
                "AtCoder AHC057 A 'Molecules' (independent simulator): 300 points drift on a 100000 x 100000 torus "
                "for 1000 turns; bond them into exactly 10 components of 30 by the last turn. A bond costs the "
                "rounded toroidal distance of its points; a merged component moves with the size-weighted mean "
                "velocity. Score per case: round(1e6 * log2(100000 * 290 / (total_cost + 1)))."
            ),
            observation_space=JsonSpace(OBSERVATION_SCHEMA),
            action_space=_ACTION_SPACE,
            max_episode_steps=TURNS,
            primary_metric="mean_log_cost_score",
            failure_score=0.0,
            environment=MoleculesEnvironment,
            summary=_summary,
            programs=shipped("ahc057", tunable="ahc057-heuristic"),
            metadata={
                "source": "evoledger.benchmarks.ahc057",
                "contest": "AtCoder Heuristic Contest 057 A",
                "generator": "evopolicygym-independent-v1",
                "spec_revision": "2025-11-29",
            },
            parameters={
                "points": POINTS,
                "turns": TURNS,
                "side": SIDE,
                "components": COMPONENTS,
                "component_size": COMPONENT_SIZE,
                "max_speed": MAX_SPEED,
            },
        )
    )


BENCHMARKS = {NAME: make_ahc057}

CATALOG = (
    CatalogEntry(
        NAME,
        "atcoder",
        "AtCoder AHC057 A Molecules (numpy simulator); log total bond cost",
        default_limits={"act_timeout_seconds": 10.0},
    ),
)
"""The catalogue row (family ``atcoder``, no extra). A Program plans on the first observation, which holds the whole
case: ``run`` and ``evaluate`` give each ``act`` 10 s unless ``--act-timeout`` says otherwise."""
