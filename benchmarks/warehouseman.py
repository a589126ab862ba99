"""CodeChef WAREHOUS "Warehouseman" (June Challenge 2018), code as policy: ``codechef/warehous-warehouseman``.

Pure Python (no extra). The rules, generator and cost are in :mod:`evoledger.benchmarks.warehouseman_rules`, written
from the public problem facts (statement revision 2018-05-08; no CodeChef text, tool or input is redistributed).

An Episode is one case and one atomic Action (``max_episode_steps`` 1). Observation: ``{"rows", "columns",
"arrivals", "instruction_limit"}`` -- the grid size (6-20 each), the arrival order of the shipments
``1 .. rows*columns-1`` and the 500,000-character limit; the observation after the Action repeats it. Action: the
whole solution, one string over the tokens ``N W S E P D LN LW LS LE UN UW US UE`` (no separators). A string that is
not a valid solution (a token the state forbids, shipments left, the forklift away from the entrance, too long)
is an invalid Action: the Policy failed the Episode, which counts :data:`FAILURE_COST` (1,000,000). A valid one
returns its cost ``(characters + 2) / (rows + columns - 1) - 2*rows*columns + 20``.

Episodes are planned by the shared contest frame (:mod:`evoledger.benchmarks.contest_benchmark`, leaf
``warehouseman``). Score (``mean_normalized_cost``, **minimize**): the mean Episode cost, failed Episodes counting
1,000,000, infra faults left out (the spec's ``scoring`` rule, so ``evoledger replay`` recomputes it).

Feedback: the score, statuses and first failure messages (the frame's); the mean characters per shipment and the
gap to 6 per shipment (one ``P``, one ``D`` and one lift-and-unload pair at least: the handling lower bound); moves;
the movement and handling shares of the characters; relocation cycles (shipments put down again after being
stored); the share of the instruction limit used; and ``diagnostics.jsonl`` (permanent): one line per Episode for
at most :data:`DIAGNOSTIC_EPISODES` Episodes (pool index, status, cost, grid size and operation counts; never the
arrivals or the instruction string).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR, shipped
from evoledger.benchmarks.contest_benchmark import Contest, ContestBenchmark, ContestConfig, jsonl_bytes, mean_or_none
from evoledger.benchmarks.warehouseman_rules import (
    FAILURE_COST,
    INSTRUCTION_LIMIT,
    MAX_SIDE,
    MIN_SIDE,
    InvalidInstructions,
    WarehouseCase,
    execute,
    generate_case,
    normalized_cost,
)
from evoledger.kernel.authoring import Artifact, CatalogEntry, EpisodeRecord, Feedback, InvalidAction, JsonSpace, Step

__all__ = ["BENCHMARKS", "CATALOG", "DIAGNOSTIC_EPISODES", "NAME", "WarehousemanBenchmark", "make_warehouseman"]

NAME: Final = "codechef/warehous-warehouseman"
DIAGNOSTIC_EPISODES: Final = 64
HANDLING_PER_SHIPMENT: Final = 6
"""``P``, ``D`` and one ``L<d>`` + ``U<d>`` pair: the characters every shipment costs at least besides moving."""
_MAX_SHIPMENTS: Final = MAX_SIDE * MAX_SIDE - 1
_OPERATIONS: Final = ("characters", "moves", "picks", "deliveries", "lifts", "unloads", "relocations")

OBSERVATION_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "rows": {"type": "integer", "minimum": MIN_SIDE, "maximum": MAX_SIDE},
        "columns": {"type": "integer", "minimum": MIN_SIDE, "maximum": MAX_SIDE},
        "arrivals": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": _MAX_SHIPMENTS},
            "minItems": MIN_SIDE * MIN_SIDE - 1,
            "maxItems": _MAX_SHIPMENTS,
        },
        "instruction_limit": {"type": "integer", "minimum": INSTRUCTION_LIMIT, "maximum": INSTRUCTION_LIMIT},
    },
}
ACTION_SCHEMA: Final = {"type": "string", "maxLength": INSTRUCTION_LIMIT}
_RULES: Final = (
    "Grid rows x columns, cells (row, column); the entrance is (0, 0), where the forklift starts with empty hands. "
    "N/W/S/E: move one cell (row-1, column-1, row+1, column+1), staying on the grid, never onto a cell holding a "
    "stored shipment (moving while carrying is allowed). P: take the next arriving shipment (at the entrance, hands "
    "empty, shipments left to arrive). D: deliver the carried shipment at the entrance, only once every shipment has "
    "arrived and only in numeric order 1, 2, 3, ... L<d>: lift the shipment stored in the adjacent cell in direction "
    "d into empty hands. U<d>: put the carried shipment into the empty adjacent cell in direction d. A valid solution "
    "ends with every shipment delivered and the forklift at the entrance; no separators; at most 500,000 characters."
)


def _observation(case: WarehouseCase) -> dict[str, Any]:
    return {
        "rows": case.rows,
        "columns": case.columns,
        "arrivals": list(case.arrivals),
        "instruction_limit": INSTRUCTION_LIMIT,
    }


class WarehousemanEnvironment:
    """One case; the Policy's single Action is the whole instruction string."""

    def __init__(self, case_seed: int) -> None:
        self._seed = case_seed
        self._case: WarehouseCase | None = None
        self._done = False

    def reset(self) -> dict[str, Any]:
        self._case = generate_case(self._seed)
        self._done = False
        return _observation(self._case)

    def step(self, action: Any) -> Step:
        if self._case is None or self._done:
            raise RuntimeError("step() called before reset() or after the Episode ended")
        if type(action) is not str:
            raise InvalidAction(f"the action is a {type(action).__name__}; it must be the instruction string")
        try:
            operations = execute(self._case, action)
        except InvalidInstructions as exc:
            raise InvalidAction(f"not a valid solution: {exc}") from None
        self._done = True
        case = self._case
        cost = normalized_cost(operations.characters, case.rows, case.columns)
        metrics = {name: float(getattr(operations, name)) for name in _OPERATIONS}
        metrics.update({"normalized_cost": cost, "rows": float(case.rows), "columns": float(case.columns)})
        return Step(_observation(case), cost, True, False, metrics)

    def legal_action(self, rng: np.random.Generator) -> str:
        """A valid solution (the shipped baseline's construction), for ``check_benchmark``; never used in a Run."""
        if self._case is None:
            raise RuntimeError("legal_action() called before reset()")
        solution: str = _baseline_solver()(self._case.rows, self._case.columns, list(self._case.arrivals))
        return solution

    def close(self) -> None:
        self._case = None
        self._done = True


@functools.cache
def _baseline_solver() -> Any:
    """The shipped baseline Program's ``solve`` (compiled from its source: no bytecode is written next to it)."""
    path = PROGRAMS_DIR / "warehouseman-baseline" / "policy.py"
    namespace: dict[str, Any] = {"__name__": "_warehouseman_baseline"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace["solve"]


def _notes(record: EpisodeRecord) -> dict[str, float]:
    """One solved Episode's figures (empty for an Episode that did not run to its end)."""
    metrics = record.final_metrics
    characters = float(metrics.get("characters", 0.0))
    shipments = float(metrics.get("rows", 0.0)) * float(metrics.get("columns", 0.0)) - 1
    if record.status != "ok" or characters <= 0 or shipments <= 0:
        return {}
    moves = float(metrics.get("moves", 0.0))
    return {
        "characters_per_shipment": characters / shipments,
        "gap_to_handling_bound": characters / shipments - HANDLING_PER_SHIPMENT,
        "moves": moves,
        "movement_fraction": moves / characters,
        "handling_fraction": 1.0 - moves / characters,
        "relocation_cycles": float(metrics.get("relocations", 0.0)),
        "limit_used": characters / INSTRUCTION_LIMIT,
    }


def _diagnostics(records: Sequence[EpisodeRecord]) -> bytes:
    rows = []
    for record in records[:DIAGNOSTIC_EPISODES]:
        row: dict[str, Any] = {"episode": record.index, "status": record.status}
        if record.status == "ok":
            metrics = record.final_metrics
            row["cost"] = float(record.episode_return)
            row["rows"] = int(metrics.get("rows", 0))
            row["columns"] = int(metrics.get("columns", 0))
            row["operations"] = {name: int(metrics.get(name, 0)) for name in _OPERATIONS}
        elif record.failed:
            row["cost"] = FAILURE_COST
        rows.append(row)
    return jsonl_bytes(rows)


def _summary(records: Sequence[EpisodeRecord]) -> tuple[dict[str, Any], bytes]:
    solved = [notes for notes in map(_notes, records) if notes]
    summary: dict[str, Any] = {
        f"mean_{key}": mean_or_none([notes[key] for notes in solved])
        for key in (
            "characters_per_shipment",
            "gap_to_handling_bound",
            "moves",
            "movement_fraction",
            "handling_fraction",
            "relocation_cycles",
            "limit_used",
        )
    }
    summary["solved"] = len(solved)
    summary["handling_lower_bound_per_shipment"] = HANDLING_PER_SHIPMENT
    summary["how_to_read"] = (
        "cost = (characters + 2) / (rows + columns - 1) - 2*rows*columns + 20, lower is better; an invalid solution "
        "ends the Episode as invalid_action (cost 1,000,000) and its message names the first bad token and its "
        "offset; characters per shipment cannot go below 6 (P, D, one lift and one unload); relocation cycles: "
        "shipments put down again after being stored; diagnostics.jsonl: per Episode its cost, grid and operation "
        "counts"
    )
    return summary, _diagnostics(records)


class WarehousemanBenchmark(ContestBenchmark):
    """``codechef/warehous-warehouseman``: the contest frame, its per-Episode lines named ``diagnostics.jsonl``."""

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Score, statuses, failure messages and the figures above; never the arrivals or instruction strings."""
        feedback = super().feedback(records)
        artifacts = tuple(
            Artifact("diagnostics.jsonl", a.media_type, a.data, "permanent") if a.name == "trace.jsonl" else a
            for a in feedback.artifacts
        )
        return Feedback(score=feedback.score, content=feedback.content, artifacts=artifacts)


def make_warehouseman(**config: Any) -> WarehousemanBenchmark:
    """CodeChef WAREHOUS Warehouseman: store shipments, then deliver them in order, in one instruction string."""
    ContestConfig(**config)
    return WarehousemanBenchmark(
        Contest(
            name=NAME,
            upstream_id="codechef/WAREHOUS/Warehouseman/mean-normalized-cost-v1",
            leaf="warehouseman",
            description=(
                "CodeChef WAREHOUS 'Warehouseman' (June Challenge 2018, independent simulator): store every arriving "
                "shipment in a rows x columns warehouse (6-20 each), then deliver them in numeric order at the "
                "entrance, all in one instruction string over N W S E P D L<d> U<d>. Cost per case: (characters + 2)"
                " / (rows + columns - 1) - 2*rows*columns + 20 (minimize); an invalid string costs 1,000,000."
            ),
            observation_space=JsonSpace(OBSERVATION_SCHEMA),
            action_space=JsonSpace(ACTION_SCHEMA),
            max_episode_steps=1,
            primary_metric="mean_normalized_cost",
            failure_score=FAILURE_COST,
            environment=WarehousemanEnvironment,
            summary=_summary,
            programs=shipped("warehouseman"),
            direction="minimize",
            metadata={
                "source": "evoledger.benchmarks.warehouseman",
                "contest": "CodeChef June Challenge 2018",
                "problem": "WAREHOUS",
                "specification_revision": "2018-05-08",
                "generator": "evopolicygym-independent-v1",
                "tokens": ["N", "W", "S", "E", "P", "D", "LN", "LW", "LS", "LE", "UN", "UW", "US", "UE"],
                "rules": _RULES,
            },
            parameters={
                "minimum_side": MIN_SIDE,
                "maximum_side": MAX_SIDE,
                "instruction_limit": INSTRUCTION_LIMIT,
                "failure_cost": FAILURE_COST,
            },
        )
    )


BENCHMARKS = {NAME: make_warehouseman}

CATALOG = (
    CatalogEntry(
        NAME,
        "codechef",
        "CodeChef WAREHOUS Warehouseman (pure-Python simulator): store and retrieve shipments in one instruction "
        "string; minimize its normalized length",
        default_limits={"act_timeout_seconds": 60.0},
    ),
)
"""The catalogue row (family ``codechef``, no extra). The Episode is one ``act`` that solves the whole case: ``run``
and ``evaluate`` give it 60 s unless ``--act-timeout`` says otherwise."""
