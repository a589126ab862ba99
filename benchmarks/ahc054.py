"""AtCoder AHC054 A "Treant's Forest" as an interactive code-as-policy Benchmark: ``atcoder/ahc054-treants-forest``.

Pure Python (no extra). The generator and turn rules are in :mod:`evoledger.benchmarks.ahc054_rules`, written from
the public statement (spec revision 2025-09-21; no AtCoder text, tool, input or seed is redistributed).

The Policy delays an adventurer who searches an ``N x N`` forest (N 20-40) for a flower, by placing treants.
Observation (a dict): ``turn``; ``adventurer`` ``[row, column]``; ``newly_revealed``, the cells revealed this turn;
``revealed_cells`` and ``placed_treants`` (counts); ``initial`` -- on the first observation only ``{"size",
"entrance", "flower", "trees"}`` (the trees sorted), else ``null``. Only the entrance is revealed before the first
Action. Action: ``{"placements": [[row, column], ...]}`` (at most 1,600; an empty list is always legal). A set with
a repeated, off-map, revealed, tree or flower cell, or one after which the flower cannot be reached from the
entrance or from the adventurer, is rejected whole: an invalid Action, the Policy failed the Episode (it counts 0).
Each accepted Action is one turn: reveal, target choice and one adventurer step (see the rules module); reward 1.
The Episode ends when the adventurer stands on the flower; it is truncated at ``max_episode_steps`` turns (2,048,
the problem's cap; a smaller value is for quick tests only).

Episodes are planned by the shared contest frame (:mod:`evoledger.benchmarks.contest_benchmark`, leaf
``treants-forest``). Score (``capped_mean_turns``, maximize): the mean number of turns survived, failed Episodes
counting 0, infra faults left out (the spec's ``scoring`` rule).

Feedback: the score, statuses and first failure messages (the frame's); how many Episodes reached / revealed the
flower and hit the cap; placements per Episode; the final revealed share of the forest; cells still open to a
treant (unrevealed, not a tree, not the flower: the per-cell rules, before the reachability check); the
adventurer's shortest path to the flower on the true map, at the end and at its longest; distinct cells visited;
and ``trace.jsonl``: per-turn diagnostics of at most
:data:`TRACE_EPISODES` Episodes and :data:`TRACE_TRANSITIONS` turns in all. The adventurer's private target order
and its current target are never published.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.ahc054_rules import MAX_SIZE, MIN_SIZE, ForestSimulation, InvalidPlacements, generate_case
from evoledger.benchmarks.contest_benchmark import Contest, ContestBenchmark, jsonl_bytes, mean_or_none
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord, InvalidAction, JsonSpace, Step
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BENCHMARKS", "CATALOG", "MAX_TURNS", "NAME", "TreantsForestConfig", "make_treants_forest"]

NAME: Final = "atcoder/ahc054-treants-forest"
MAX_TURNS: Final = 2_048
MAX_PLACEMENTS: Final = 1_600
TRACE_EPISODES: Final = 4
TRACE_TRANSITIONS: Final = 4_096
_CELLS: Final = MAX_SIZE * MAX_SIZE

_OBSERVED_CELL: Final = {
    "type": "array",
    "prefixItems": [{"type": "integer", "minimum": 0, "maximum": MAX_SIZE - 1}] * 2,
}
_CELL_LIST: Final = {"type": "array", "items": _OBSERVED_CELL, "maxItems": _CELLS}
OBSERVATION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "turn": {"type": "integer", "minimum": 0, "maximum": MAX_TURNS},
        "adventurer": _OBSERVED_CELL,
        "newly_revealed": _CELL_LIST,
        "revealed_cells": {"type": "integer", "minimum": 1, "maximum": _CELLS},
        "placed_treants": {"type": "integer", "minimum": 0, "maximum": _CELLS},
        "initial": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "properties": {
                        "size": {"type": "integer", "minimum": MIN_SIZE, "maximum": MAX_SIZE},
                        "entrance": _OBSERVED_CELL,
                        "flower": _OBSERVED_CELL,
                        "trees": _CELL_LIST,
                    },
                },
            ]
        },
    },
}
ACTION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "placements": {
            "type": "array",
            "items": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}]},
            "maxItems": MAX_PLACEMENTS,
        }
    },
}
_RULES: Final = (
    "Cells are [row, column]; the entrance is [0, N // 2]; only it is revealed before your first Action. Each Action "
    "places treants on cells: the whole set is rejected (the Episode fails, 0 turns) if a cell repeats, is off the "
    "map, already revealed, already a tree or the flower, or if afterwards the flower cannot be reached from the "
    "entrance or from the adventurer (4-neighbour paths through non-tree cells). Then one turn: from the "
    "adventurer's cell, along each of the 4 directions, cells are revealed up to and including the first tree or the "
    "border; the adventurer's target becomes the flower once it is revealed; otherwise it keeps its target while it "
    "can reach it on its tentative map (unrevealed cells assumed empty, revealed trees blocked) and the target is "
    "unrevealed, else takes the next unrevealed, tentatively reachable cell of its private random order; it steps to "
    "the neighbour with the strictly smallest tentative distance to the target (up, down, left, right: the first "
    "wins ties). The Episode ends when it stands on the flower, or after 2,048 turns; each turn scores 1."
)
_TRACED: Final = (
    "turn",
    "adventurer_row",
    "adventurer_column",
    "placed_this_turn",
    "newly_revealed",
    "revealed_fraction",
    "flower_revealed",
    "flower_path",
    "open_cells",
)


class TreantsForestConfig(BaseModel):
    """The turn cap: the problem's 2,048 by default; fewer only to keep a test short."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int = Field(default=MAX_TURNS, ge=1, le=MAX_TURNS)


def _placements(action: Any) -> list[tuple[int, int]]:
    """The action's cells; :class:`InvalidAction` if it is not ``{"placements": [[row, column], ...]}``."""
    if type(action) is not dict or list(action) != ["placements"]:
        raise InvalidAction('the action must be {"placements": [[row, column], ...]}')
    raw = action["placements"]
    if type(raw) not in (list, tuple) or len(raw) > MAX_PLACEMENTS:
        raise InvalidAction(f"placements must be a list of at most {MAX_PLACEMENTS} [row, column] pairs")
    cells = []
    for item in raw:
        if type(item) not in (list, tuple) or len(item) != 2 or not all(map(_is_integer, item)):
            raise InvalidAction(f"placement {item!r:.60} is not a [row, column] pair of integers")
        cells.append((int(item[0]), int(item[1])))
    return cells


def _is_integer(value: Any) -> bool:
    """An int or numpy integer, never a bool (the action space's integers)."""
    return type(value) is int or isinstance(value, np.integer)


class TreantsForestEnvironment:
    """One forest; one Action per adventurer step."""

    def __init__(self, case_seed: int, max_turns: int = MAX_TURNS) -> None:
        self._seed = case_seed
        self._max_turns = max_turns
        self._simulation: ForestSimulation | None = None
        self._worst_path = 0
        self._done = False

    def reset(self) -> dict[str, Any]:
        case = generate_case(self._seed)
        self._simulation = simulation = ForestSimulation(case)
        self._worst_path = simulation.flower_path()
        self._done = False
        observation = self._observation(simulation)
        observation["initial"] = {
            "size": case.size,
            "entrance": list(case.entrance),
            "flower": list(case.flower),
            "trees": [list(cell) for cell in sorted(case.trees)],
        }
        return observation

    @staticmethod
    def _observation(simulation: ForestSimulation) -> dict[str, Any]:
        return {
            "turn": simulation.turn,
            "adventurer": list(divmod(simulation.position, simulation.size)),
            "newly_revealed": simulation.cells(simulation.newly_revealed),
            "revealed_cells": simulation.revealed_count,
            "placed_treants": simulation.placed,
            "initial": None,
        }

    def step(self, action: Any) -> Step:
        simulation = self._simulation
        if simulation is None or self._done:
            raise RuntimeError("step() called before reset() or after the Episode ended")
        cells = _placements(action)
        try:
            simulation.step(cells)
        except InvalidPlacements as exc:
            raise InvalidAction(f"placements rejected as a whole: {exc}") from None
        path = simulation.flower_path()
        self._worst_path = max(self._worst_path, path)
        terminated = simulation.done
        truncated = not terminated and simulation.turn >= self._max_turns
        self._done = terminated or truncated
        row, column = divmod(simulation.position, simulation.size)
        metrics = {
            "turn": float(simulation.turn),
            "adventurer_row": float(row),
            "adventurer_column": float(column),
            "placed_this_turn": float(len(cells)),
            "placed_treants": float(simulation.placed),
            "newly_revealed": float(len(simulation.newly_revealed)),
            "revealed_fraction": simulation.revealed_count / simulation.size**2,
            "flower_revealed": float(simulation.flower_revealed),
            "flower_reached": float(terminated),
            "turn_cap": float(truncated),
            "flower_path": float(path),
            "flower_path_worst": float(self._worst_path),
            "open_cells": float(simulation.open_cells()),
            "unique_positions": float(len(simulation.visited)),
        }
        return Step(self._observation(simulation), 1.0, terminated, truncated, metrics)

    def legal_action(self, rng: np.random.Generator) -> dict[str, list[list[int]]]:
        """A random legal set (mostly empty, sometimes one cell), for ``check_benchmark``; never used in a Run."""
        simulation = self._simulation
        if simulation is None or rng.random() < 0.7:
            return {"placements": []}
        cell = [int(v) for v in rng.integers(0, simulation.size, size=2)]
        try:
            simulation.check([(cell[0], cell[1])])
        except InvalidPlacements:
            return {"placements": []}
        return {"placements": [cell]}

    def close(self) -> None:
        self._simulation = None
        self._done = True


_FINAL: Final = {
    "placed_treants": "placed_treants",
    "final_revealed_fraction": "revealed_fraction",
    "final_open_cells": "open_cells",
    "final_flower_path": "flower_path",
    "worst_flower_path": "flower_path_worst",
    "unique_positions": "unique_positions",
}
"""Summary figure -> the last-step metric it averages over the Episodes that ran to the end."""


def _summary(records: Sequence[EpisodeRecord]) -> tuple[dict[str, Any], bytes]:
    ran = [r for r in records if r.status == "ok"]
    finals = [r.final_metrics for r in ran]
    summary: dict[str, Any] = {
        "flower_reached": sum(1 for r in ran if r.terminated),
        "flower_revealed": sum(1 for m in finals if m.get("flower_revealed")),
        "cap_hits": sum(1 for r in ran if r.truncated),
        "episodes_with_placements": sum(1 for m in finals if m.get("placed_treants", 0) > 0),
        "max_placed_treants": max((float(m.get("placed_treants", 0.0)) for m in finals), default=None),
        "mean_turns_of_finished": mean_or_none([float(r.steps) for r in ran]),
    }
    summary.update(
        {f"mean_{name}": mean_or_none([float(m[key]) for m in finals if key in m]) for name, key in _FINAL.items()}
    )
    summary["how_to_read"] = (
        "score = mean turns survived (reward 1 per accepted turn, at most the turn cap); a rejected placement set "
        "ends the Episode as invalid_action (0 turns) and its message names the broken rule; flower_path: the "
        "adventurer's shortest path to the flower on the true map; open_cells: cells a treant could still take by "
        "the per-cell rules; trace.jsonl: per turn the adventurer's cell, placements, cells newly revealed and "
        "these figures (never the adventurer's private targets)"
    )
    return summary, _trace(records)


def _trace(records: Sequence[EpisodeRecord]) -> bytes:
    """Per-turn diagnostics of the first Episodes with a trajectory (public facts only)."""
    rows: list[dict[str, Any]] = []
    traced = 0
    for record in records:
        trajectory = record.trajectory
        if trajectory is None or traced == TRACE_EPISODES or len(rows) >= TRACE_TRANSITIONS:
            continue
        traced += 1
        for step, (action, metrics) in enumerate(zip(trajectory.actions, trajectory.metrics, strict=False)):
            if len(rows) >= TRACE_TRANSITIONS:
                break
            if not isinstance(metrics, Mapping):
                continue
            row: dict[str, Any] = {"episode": record.index, "step": step}
            row.update({key: metrics[key] for key in _TRACED if key in metrics})
            if isinstance(action, Mapping) and isinstance(action.get("placements"), list | tuple):
                row["placements"] = [list(cell) for cell in action["placements"][:16]]
            rows.append(row)
    return jsonl_bytes(rows)


def make_treants_forest(**config: Any) -> ContestBenchmark:
    """AtCoder AHC054 A Treant's Forest: place treants to delay the adventurer; score the turns it takes."""
    max_turns = TreantsForestConfig(**config).max_episode_steps
    parameters: dict[str, Any] = {"minimum_size": MIN_SIZE, "maximum_size": MAX_SIZE, "max_placements": MAX_PLACEMENTS}
    if max_turns != MAX_TURNS:  # only then: the default spec's digest is the problem's
        parameters["max_turns"] = max_turns
    return ContestBenchmark(
        Contest(
            name=NAME,
            upstream_id="atcoder/AHC054/TreantsForest/capped-mean-turns-v1",
            leaf="treants-forest",
            description=(
                "AtCoder AHC054 A 'Treant's Forest' (independent simulator): an adventurer searches an N x N forest "
                "(N 20-40) for a flower, revealing cells along its row and column; each turn place treants on "
                "unrevealed cells (the flower must stay reachable) to make it take longer. Score per case: turns "
                "until it stands on the flower, capped at 2,048 (maximize)."
            ),
            observation_space=JsonSpace(OBSERVATION_SCHEMA),
            action_space=JsonSpace(ACTION_SCHEMA),
            max_episode_steps=max_turns,
            primary_metric="capped_mean_turns",
            failure_score=0.0,
            environment=functools.partial(TreantsForestEnvironment, max_turns=max_turns),
            summary=_summary,
            programs=shipped("ahc054", tunable="ahc054-heuristic"),
            metadata={
                "source": "evoledger.benchmarks.ahc054",
                "contest": "AtCoder Heuristic Contest 054 A",
                "specification_revision": "2025-09-21",
                "rules": _RULES,
                "generator": "evopolicygym-independent-v1",
            },
            parameters=parameters,
        )
    )


BENCHMARKS = {NAME: make_treants_forest}

CATALOG = (
    CatalogEntry(
        NAME,
        "atcoder",
        "AtCoder AHC054 A Treant's Forest (pure-Python simulator): delay an adventurer searching for a flower; turns",
    ),
)
"""The catalogue row (family ``atcoder``, no extra)."""
