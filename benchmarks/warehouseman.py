"""CodeChef WAREHOUS "Warehouseman" (June Challenge 2018) as a code-as-policy Benchmark: ``codechef/warehous-warehouseman``.

Pure Python (no extra). The rules, generator and cost are in :mod:`evoledger.benchmarks.warehouseman_rules`, written
from the public problem facts (statement revision 2018-05-08; no CodeChef text, tool or input is redistributed).

An Episode is one case and one atomic Action (``max_episode_steps`` 1). Observation: ``{"rows", "columns",
"arrivals", "instruction_limit"}`` -- the grid size (6-20 each), the arrival order of the shipments
``1 .. rows*columns-1`` and the 500,000-character limit; the observation after the Action repeats it. Action: the
whole solution, one string over the tokens ``N W S E P D LN LW LS LE UN UW US UE`` (no separators). A string that is
not a valid solution (a token the state forbids, shipments left, the forklift away from the entrance, too long)
is an invalid Action: the Policy failed the Episode, which counts :data:`FAILURE_COST` (1,000,000). A valid one
returns its cost ``(characters + 2) / (rows + columns - 1) - 2*rows*columns + 20``.

Score (``mean_normalized_cost``, **minimize**): the mean Episode cost, failed Episodes counting 1,000,000, infra
faults left out (the spec's ``scoring`` rule, so ``evoledger replay`` recomputes it).

Feedback: the score; characters per shipment and the gap to 6 per shipment (one ``P``, one ``D`` and one
lift-and-unload pair at least: the handling lower bound); moves; the movement and handling shares of the
characters; relocation cycles (shipments put back down while retrieving); the share of the instruction limit
used; and ``diagnostics.jsonl``: one line per Episode for at most :data:`DIAGNOSTIC_EPISODES` Episodes (pool index,
status, cost, grid size and operation counts; never the arrivals or the instruction string).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR, shipped
from evoledger.benchmarks.feedback_summary import SCORE_DIGITS, mean_return_rule, summarize_episodes
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
from evoledger.kernel.authoring import (
    Artifact,
    BenchmarkPrograms,
    BenchmarkSpec,
    CatalogEntry,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    InvalidAction,
    JsonSpace,
    Split,
    Step,
    check_episode_request,
    derive_seed,
    describe_space,
    parameters_digest,
)
from pydantic import BaseModel, ConfigDict

__all__ = ["BENCHMARKS", "CATALOG", "DIAGNOSTIC_EPISODES", "NAME", "WarehousemanBenchmark", "WarehousemanConfig"]

NAME: Final = "codechef/warehous-warehouseman"
DIAGNOSTIC_EPISODES: Final = 64
HANDLING_PER_SHIPMENT: Final = 6
"""``P``, ``D`` and one ``L<d>`` + ``U<d>`` pair: the characters every shipment costs at least besides moving."""
_SCORING: Final = mean_return_rule(FAILURE_COST)
_SCORE_RULE: Final = "mean normalized cost (lower is better); a failed Episode counts 1,000,000"
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


class WarehousemanConfig(BaseModel):
    """WAREHOUS has no settings: the case distribution, limit and cost are the problem's."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _observation(case: WarehouseCase) -> dict[str, Any]:
    return {
        "rows": case.rows,
        "columns": case.columns,
        "arrivals": list(case.arrivals),
        "instruction_limit": INSTRUCTION_LIMIT,
    }


class WarehousemanEnvironment:
    """One case; the Policy's single Action is the whole instruction string."""

    def __init__(self, episode: EpisodeSpec) -> None:
        self._seed = episode.seed
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
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102 - our own Program
    return namespace["solve"]


def _outcome(record: EpisodeRecord) -> str:
    return "solved" if record.terminated else "unfinished"


def _notes(record: EpisodeRecord) -> dict[str, float]:
    metrics = record.final_metrics
    characters = float(metrics.get("characters", 0.0))
    shipments = float(metrics.get("rows", 0.0)) * float(metrics.get("columns", 0.0)) - 1
    if characters <= 0 or shipments <= 0:
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


class WarehousemanBenchmark:
    """``codechef/warehous-warehouseman`` (see the module docstring)."""

    def __init__(self, config: WarehousemanConfig) -> None:
        self.config = config
        self._observation_space = JsonSpace(OBSERVATION_SCHEMA)
        self._action_space = JsonSpace(ACTION_SCHEMA)
        parameters: dict[str, Any] = {
            "generator": "evopolicygym-independent-v1",
            "minimum_side": MIN_SIDE,
            "maximum_side": MAX_SIDE,
            "instruction_limit": INSTRUCTION_LIMIT,
            "failure_cost": FAILURE_COST,
        }
        self._spec = BenchmarkSpec(
            id=NAME,
            description=(
                "CodeChef WAREHOUS: store every arriving shipment in the grid warehouse, then deliver them in "
                "numeric order at the entrance, in one instruction string; minimize its normalized length."
            ),
            observation_space=describe_space(self._observation_space),
            action_space=describe_space(self._action_space),
            metadata={
                "source": "evoledger.benchmarks.warehouseman",
                "provider": "CodeChef",
                "problem": "WAREHOUS",
                "contest": "June Challenge 2018",
                "upstream_id": "codechef/WAREHOUS/Warehouseman/mean-normalized-cost-v1",
                "specification_revision": "2018-05-08",
                "implementation": "independent, from the public problem facts; no CodeChef material included",
                "score_rule": _SCORE_RULE,
                "tokens": ["N", "W", "S", "E", "P", "D", "LN", "LW", "LS", "LE", "UN", "UW", "US", "UE"],
            },
            environment_parameters=parameters,
            max_episode_steps=1,
            primary_metric="mean_normalized_cost",
            score_direction="minimize",
            parameters_digest=parameters_digest(parameters),
            scoring=_SCORING,
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms:
        return shipped("warehouseman")

    @property
    def observation_space(self) -> JsonSpace:
        return self._observation_space

    @property
    def action_space(self) -> JsonSpace:
        return self._action_space

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        check_episode_request(split, seed=seed, count=count)
        return [EpisodeSpec(split=split, index=i, seed=derive_seed(seed, NAME, split, i)) for i in range(count)]

    def make_environment(self, episode: EpisodeSpec) -> WarehousemanEnvironment:
        return WarehousemanEnvironment(episode)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """The mean cost and what explains it (see the module docstring); no arrivals, no instruction strings."""
        base = summarize_episodes(
            benchmark_id=NAME,
            primary_metric=self._spec.primary_metric,
            score_rule=_SCORE_RULE,
            failure_return=FAILURE_COST,
            records=records,
            outcome=_outcome,
            notes=_notes,
        )
        content = dict(base.content)
        notes = content.get("notes") or {}
        per_shipment = (notes.get("characters_per_shipment") or {}).get("mean")
        content["summary"] = (
            f"{base.content['summary']}; characters per shipment mean "
            f"{'n/a' if per_shipment is None else round(per_shipment, 2)} (handling lower bound "
            f"{HANDLING_PER_SHIPMENT})"
        )
        content["failure_cost"] = FAILURE_COST
        content["handling_lower_bound_per_shipment"] = HANDLING_PER_SHIPMENT
        artifacts = [a for a in base.artifacts if a.name != "trace.jsonl"]  # it would hold arrivals and strings
        artifacts.append(
            Artifact("diagnostics.jsonl", "application/x-ndjson", _diagnostics(records), retention="permanent")
        )
        return Feedback(score=base.score, content=content, artifacts=tuple(artifacts))


def _diagnostics(records: Sequence[EpisodeRecord]) -> bytes:
    lines = []
    for record in records[:DIAGNOSTIC_EPISODES]:
        line: dict[str, Any] = {"episode": record.index, "status": record.status}
        if record.status == "ok":
            metrics = record.final_metrics
            line["cost"] = round(float(record.episode_return), SCORE_DIGITS)
            line["rows"] = int(metrics.get("rows", 0))
            line["columns"] = int(metrics.get("columns", 0))
            line["operations"] = {name: int(metrics.get(name, 0)) for name in _OPERATIONS}
        elif record.failed:
            line["cost"] = FAILURE_COST
        lines.append(json.dumps(line, sort_keys=True) + "\n")
    return "".join(lines).encode()


def make_warehouseman(**config: Any) -> WarehousemanBenchmark:
    """``codechef/warehous-warehouseman``."""
    return WarehousemanBenchmark(WarehousemanConfig(**config))


BENCHMARKS = {NAME: make_warehouseman}

CATALOG = (
    CatalogEntry(
        NAME,
        "codechef",
        "CodeChef WAREHOUS (June 2018): store and retrieve shipments in one instruction string; minimize its length",
    ),
)
"""The catalogue row (pure Python: no extra)."""
