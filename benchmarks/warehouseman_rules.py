"""CodeChef WAREHOUS "Warehouseman" (June Challenge 2018): the case generator, the instruction simulator and the cost.

An independent implementation from the public problem facts; no CodeChef text, tool or input is included.

* Case: ``R = 6 + below(15)``, ``C = 6 + below(15)`` (6-20 each) and the arrival order, a permutation of the
  shipments ``1 .. R*C-1``: the sorted list shuffled (Fisher-Yates, :class:`CaseStream`), and shuffled whole again
  while shipment 1 is last. Drawn from the stream of domain :data:`GENERATOR_DOMAIN` and the Episode's seed.
* Grid ``R x C``; the entrance is cell (0, 0) (row, column), where the forklift starts with empty hands. Tokens:
  ``N``/``W``/``S``/``E`` move one cell (row - 1, column - 1, row + 1, column + 1): it must stay on the grid and the
  destination must hold no stored shipment (moving while carrying is allowed); ``P`` takes the next arriving
  shipment (only at the entrance, hands empty, shipments left to arrive); ``D`` delivers the carried shipment at the
  entrance, only once every shipment has been taken and only in numeric order 1, 2, 3, ...; ``L<d>`` lifts the
  shipment stored in the adjacent cell in direction ``d`` into empty hands; ``U<d>`` puts the carried shipment into
  the empty adjacent cell in direction ``d``.
* A solution is valid when, after its last token, every shipment was taken and delivered, the forklift is at the
  entrance with empty hands (so the grid is empty). It is ASCII tokens only (no separators), at most
  :data:`INSTRUCTION_LIMIT` characters.
* Cost of a valid solution of ``n`` characters: ``(n + 2) / (R + C - 1) - 2*R*C + 20`` (lower is better); an
  invalid one costs :data:`FAILURE_COST`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from evoledger.benchmarks.contest_stream import CaseStream

__all__ = [
    "FAILURE_COST",
    "GENERATOR_DOMAIN",
    "INSTRUCTION_LIMIT",
    "MAX_SIDE",
    "MIN_SIDE",
    "InvalidInstructions",
    "Operations",
    "WarehouseCase",
    "execute",
    "generate_case",
    "normalized_cost",
]

GENERATOR_DOMAIN: Final = b"evopolicygym-warehouseman/generator/v1\0"
MIN_SIDE: Final = 6
MAX_SIDE: Final = 20
INSTRUCTION_LIMIT: Final = 500_000
FAILURE_COST: Final = 1_000_000.0
_DELTAS: Final = {"N": (-1, 0), "W": (0, -1), "S": (1, 0), "E": (0, 1)}


class InvalidInstructions(ValueError):
    """An instruction string that is not a valid solution; the message names the first fault and its offset."""


@dataclass(frozen=True, slots=True)
class WarehouseCase:
    """One generated case: the grid size and the arrival order of the shipments ``1 .. rows*columns-1``."""

    rows: int
    columns: int
    arrivals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Operations:
    """What a valid solution did, token by token."""

    characters: int
    moves: int
    picks: int
    deliveries: int
    lifts: int
    unloads: int
    relocations: int
    """Unloads beyond one per shipment: shipments put down again after being stored (lift-and-put-back cycles).
    Every shipment is stored at least once (only shipment 1 could go straight from a pick to a delivery, and it is
    never the last to arrive), so this is ``unloads - picks``."""


def generate_case(seed: int) -> WarehouseCase:
    """The case of the Episode whose environment seed is ``seed``."""
    stream = CaseStream(GENERATOR_DOMAIN, seed)
    rows = MIN_SIDE + stream.below(MAX_SIDE - MIN_SIDE + 1)
    columns = MIN_SIDE + stream.below(MAX_SIDE - MIN_SIDE + 1)
    arrivals = list(range(1, rows * columns))
    stream.shuffle(arrivals)
    while arrivals[-1] == 1:
        stream.shuffle(arrivals)
    return WarehouseCase(rows, columns, tuple(arrivals))


def normalized_cost(characters: int, rows: int, columns: int) -> float:
    """The cost of a valid solution of ``characters`` characters on a ``rows x columns`` grid."""
    return (characters + 2) / (rows + columns - 1) - 2 * rows * columns + 20


def execute(case: WarehouseCase, instructions: str) -> Operations:
    """Run ``instructions`` on ``case``; :class:`InvalidInstructions` unless it is a complete valid solution."""
    if len(instructions) > INSTRUCTION_LIMIT:
        raise InvalidInstructions(f"{len(instructions)} characters; the limit is {INSTRUCTION_LIMIT}")
    rows, columns = case.rows, case.columns
    grid = [0] * (rows * columns)  # shipment number per cell, 0 = empty
    row = column = 0
    carried = 0
    picked = delivered = moves = lifts = unloads = 0
    total = len(case.arrivals)
    i, n = 0, len(instructions)
    while i < n:
        token = instructions[i]
        offset = i
        i += 1
        if token in "LU":
            if i == n or instructions[i] not in _DELTAS:
                raise InvalidInstructions(f"offset {offset}: {token!r} must be followed by one of N, W, S, E")
            dr, dc = _DELTAS[instructions[i]]
            i += 1
            r, c = row + dr, column + dc
            if not (0 <= r < rows and 0 <= c < columns):
                raise InvalidInstructions(f"offset {offset}: {token}{instructions[i - 1]} reaches off the grid")
            cell = r * columns + c
            if token == "L":
                if carried or not grid[cell]:
                    why = "hands are full" if carried else "the cell is empty"
                    raise InvalidInstructions(f"offset {offset}: cannot lift, {why}")
                carried, grid[cell] = grid[cell], 0
                lifts += 1
            else:
                if not carried or grid[cell]:
                    why = "hands are empty" if not carried else "the cell holds a shipment"
                    raise InvalidInstructions(f"offset {offset}: cannot unload, {why}")
                grid[cell], carried = carried, 0
                unloads += 1
        elif token in _DELTAS:
            dr, dc = _DELTAS[token]
            r, c = row + dr, column + dc
            if not (0 <= r < rows and 0 <= c < columns) or grid[r * columns + c]:
                raise InvalidInstructions(f"offset {offset}: cannot move {token} from ({row}, {column})")
            row, column = r, c
            moves += 1
        elif token == "P":
            if row or column or carried or picked == total:
                raise InvalidInstructions(
                    f"offset {offset}: cannot pick (needs the entrance, empty hands, arrivals left)"
                )
            carried = case.arrivals[picked]
            picked += 1
        elif token == "D":
            if row or column or carried != delivered + 1 or picked < total:
                raise InvalidInstructions(
                    f"offset {offset}: cannot deliver (needs the entrance, every shipment picked and shipment "
                    f"{delivered + 1} in hand)"
                )
            carried = 0
            delivered += 1
        else:
            raise InvalidInstructions(f"offset {offset}: {token!r} is not an instruction (N W S E P D L<d> U<d>)")
    if delivered < total or row or column:
        raise InvalidInstructions(
            f"the instructions end with {delivered} of {total} shipments delivered, the forklift at ({row}, {column})"
        )
    return Operations(n, moves, picked, delivered, lifts, unloads, unloads - picked)
