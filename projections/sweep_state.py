"""The state of a sweep, folded from its log: its cells, and each cell's attempts and last outcome.

A pure fold over the sweep's Events (``sweep-created``, ``sweep-cell-started``, ``sweep-cell-placed``,
``sweep-cell-ended``); any other kind is counted and otherwise ignored. Whether a cell's Run is finished is decided
from the Run's own ledger (the truth about that Run); this state says what the sweep saw and did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from evoledger.ledger.errors import IntegrityError
from evoledger.ledger.events import (
    EventBase,
    SweepCell,
    SweepCellEnded,
    SweepCellPlaced,
    SweepCellStarted,
    SweepCreated,
)

__all__ = ["CellHistory", "SweepState", "fold_sweep"]


@dataclass(frozen=True, slots=True)
class CellHistory:
    """What the sweep did with one cell: its attempts, the last one's mode and its last recorded end."""

    cell: SweepCell
    attempts: int = 0
    last_mode: str | None = None
    running: bool = False
    """An attempt started and no end is recorded (the sweep itself was killed before it could record one)."""
    last_end: SweepCellEnded | None = None
    placed: SweepCellPlaced | None = None
    """Where the last attempt placed on a Ray cluster ran (None: no attempt was placed, or the last one was not)."""


@dataclass(frozen=True, slots=True)
class SweepState:
    """A sweep's cells in order, each with its :class:`CellHistory`."""

    created: SweepCreated | None = None
    cells: Mapping[str, CellHistory] = field(default_factory=lambda: MappingProxyType({}))
    events: int = 0

    @property
    def sweep_id(self) -> str:
        return "" if self.created is None else self.created.sweep_id


def fold_sweep(events: Iterable[EventBase], state: SweepState | None = None) -> SweepState:
    """The :class:`SweepState` after ``events`` (from ``state``, default: from zero); refuses a log that does not
    start with ``sweep-created``."""
    start = state or SweepState()
    created = start.created
    cells = dict(start.cells)
    count = start.events
    for event in events:
        count += 1
        if isinstance(event, SweepCreated):
            if created is not None:
                raise IntegrityError("the sweep log records sweep-created twice; it was not written by evoledger")
            created = event
            cells = {cell.name: CellHistory(cell) for cell in event.cells}
            continue
        if created is None:
            raise IntegrityError(f"the sweep log's event {count} ({event.kind}) comes before sweep-created")
        if isinstance(event, SweepCellStarted | SweepCellPlaced | SweepCellEnded):
            history = cells.get(event.cell)
            if history is None:
                raise IntegrityError(f"the sweep log names cell {event.cell!r}, which sweep-created does not declare")
            if isinstance(event, SweepCellStarted):
                cells[event.cell] = replace(
                    history, attempts=event.attempt, last_mode=event.mode, running=True, placed=None
                )
            elif isinstance(event, SweepCellPlaced):
                cells[event.cell] = replace(history, placed=event)
            else:
                cells[event.cell] = replace(history, running=False, last_end=event)
    return SweepState(created=created, cells=MappingProxyType(cells), events=count)
