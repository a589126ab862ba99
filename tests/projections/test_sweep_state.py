"""The sweep state fold: cells from sweep-created, attempts and ends per cell; a non-sweep log is refused."""

from __future__ import annotations

import pytest
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import IntegrityError
from evoledger.ledger.events import EventBase, RunEnded, SweepCell, SweepCellEnded, SweepCellStarted, SweepCreated
from evoledger.projections.sweep_state import fold_sweep
from hypothesis import given
from hypothesis import strategies as st


def _cell(name: str) -> SweepCell:
    return SweepCell(name=name, benchmark="toy/counter", agent="baseline", seed=0)


CREATED = SweepCreated(sweep_id="s", source_digest=digest_of(b"x"), cells=(_cell("a"), _cell("b")))


def test_attempts_and_the_last_end_per_cell() -> None:
    state = fold_sweep(
        [
            CREATED,
            SweepCellStarted(cell="a", mode="run", attempt=1, workers=1),
            SweepCellEnded(cell="a", outcome="interrupted", exit_code=-15),
            SweepCellStarted(cell="a", mode="resume", attempt=2),
        ]
    )
    assert list(state.cells) == ["a", "b"]
    a, b = state.cells["a"], state.cells["b"]
    assert (a.attempts, a.last_mode, a.running) == (2, "resume", True)
    assert a.last_end is not None
    assert a.last_end.outcome == "interrupted"
    assert (b.attempts, b.running, b.last_end) == (0, False, None)
    assert state.events == 4
    assert state.sweep_id == "s"


@given(st.lists(st.sampled_from(["start-a", "end-a", "start-b", "end-b"]), max_size=12), st.integers(0, 12))
def test_folding_in_two_parts_equals_folding_at_once(steps: list[str], cut: int) -> None:
    events: list[EventBase] = [CREATED]
    attempts = {"a": 0, "b": 0}
    for step in steps:
        what, cell = step.split("-")
        if what == "start":
            attempts[cell] += 1
            events.append(SweepCellStarted(cell=cell, mode="run", attempt=attempts[cell]))
        else:
            events.append(SweepCellEnded(cell=cell, outcome="failed", exit_code=1))
    cut = min(cut, len(events))
    assert fold_sweep(events[cut:], fold_sweep(events[:cut])) == fold_sweep(events)


@pytest.mark.parametrize(
    "events",
    [
        [SweepCellStarted(cell="a", mode="run", attempt=1)],  # before sweep-created
        [CREATED, CREATED],
        [CREATED, SweepCellEnded(cell="zzz", outcome="failed")],  # a cell the sweep does not declare
    ],
)
def test_a_log_that_is_not_a_sweeps_is_refused(events: list[EventBase]) -> None:
    with pytest.raises(IntegrityError):
        fold_sweep(events)


def test_other_kinds_are_counted_and_ignored() -> None:
    state = fold_sweep([CREATED, RunEnded(reason="finished")])
    assert state.events == 2
    assert all(h.attempts == 0 for h in state.cells.values())
