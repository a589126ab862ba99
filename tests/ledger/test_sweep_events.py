"""The sweep Events: golden payloads (the encoding never drifts silently), strictness and the Object they reference."""

from __future__ import annotations

import pytest
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import (
    SweepCell,
    SweepCellEnded,
    SweepCellPlaced,
    SweepCellStarted,
    SweepCreated,
    from_stored,
    object_refs,
    to_pending,
)
from evoledger.ledger.records import GENESIS_HASH, StoredEvent, chain_hash
from pydantic import ValidationError

CELL = SweepCell(
    name="toy-counter--baseline--seed-0",
    benchmark="toy/counter",
    settings={"high": 20},
    agent="baseline",
    seed=0,
    run={"episode_budget": 2},
)
GOLDEN = [
    (
        SweepCreated(
            sweep_id="golden-sweep", source_digest=digest_of(b"[sweep]"), cells=(CELL,), created_by="evoledger 0.1.0"
        ),
        b'{"cells":[{"agent":"baseline","agent_options":{},"benchmark":"toy/counter",'
        b'"name":"toy-counter--baseline--seed-0","run":{"episode_budget":2},"seed":0,"settings":{"high":20}}],'
        b'"created_by":"evoledger 0.1.0",'
        b'"source_digest":"sha256:6edf7486a4938f558b7489f2086b15211de381c7cfc398c8588eeace8b8ef0b4",'
        b'"sweep_id":"golden-sweep"}',
    ),
    (
        SweepCellStarted(cell="toy-counter--baseline--seed-0", mode="resume", attempt=2),
        b'{"attempt":2,"cell":"toy-counter--baseline--seed-0","mode":"resume","workers":null}',
    ),
    (
        SweepCellEnded(
            cell="toy-counter--baseline--seed-0",
            outcome="finished",
            exit_code=0,
            reason="finished",
            selected_submission_id="submission-000001",
            assessment_score=1.0,
            budget_used=2,
            run_head_hash=digest_of(b"head"),
            run_events=30,
        ),
        b'{"assessment_score":1.0,"budget_used":2,"cell":"toy-counter--baseline--seed-0","exit_code":0,"message":"",'
        b'"outcome":"finished","reason":"finished","run_events":30,'
        b'"run_head_hash":"sha256:9f2e6d33a3717ee826353a404ba4618d1aeeb6879ad7936bce8ed5f46814924d",'
        b'"selected_submission_id":"submission-000001"}',
    ),
    (
        SweepCellPlaced(
            cell="toy-counter--baseline--seed-0",
            attempt=2,
            node_id="6fab48db1d610c66bac9949ae3deec3f06c9dbb737e85ac678f7914e",
            hostname="node-a",
            address="10.0.0.7",
            pid=4242,
        ),
        b'{"address":"10.0.0.7","attempt":2,"cell":"toy-counter--baseline--seed-0","hostname":"node-a",'
        b'"node_id":"6fab48db1d610c66bac9949ae3deec3f06c9dbb737e85ac678f7914e","pid":4242}',
    ),
]


@pytest.mark.parametrize(("event", "payload"), GOLDEN, ids=[e.kind for e, _ in GOLDEN])
def test_golden_payloads_round_trip(
    event: SweepCreated | SweepCellStarted | SweepCellEnded | SweepCellPlaced, payload: bytes
) -> None:
    pending = to_pending(event)
    assert pending.payload == payload
    assert pending.visibility == "host"
    row = StoredEvent(
        seq=0,
        kind=pending.kind,
        version=pending.version,
        visibility=pending.visibility,
        payload=pending.payload,
        prev_hash=GENESIS_HASH,
        hash=chain_hash(GENESIS_HASH, pending.kind, pending.version, pending.visibility, pending.payload),
        recorded_at="2024-01-01T00:00:00Z",
    )
    assert from_stored(row) == event


def test_the_sweep_file_is_an_object_and_the_run_head_is_not() -> None:
    created, _ = GOLDEN[0]
    ended, _ = GOLDEN[2]
    assert object_refs(created) == {digest_of(b"[sweep]")}
    assert object_refs(ended) == frozenset()  # a log head is a hash, not an Object the sweep's store must hold


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "../escape"},  # a cell name is a folder name: no path in it
        {"name": ""},
        {"seed": -1},
        {"extra": 1},
    ],
)
def test_a_cell_is_strict(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SweepCell.model_validate({**CELL.model_dump(), **bad})


def test_a_sweep_has_at_least_one_cell_and_an_outcome_is_one_of_four() -> None:
    with pytest.raises(ValidationError):
        SweepCreated(sweep_id="s", source_digest=digest_of(b""), cells=())
    with pytest.raises(ValidationError):
        SweepCellEnded.model_validate({"cell": "c", "outcome": "skipped"})


def _stored(chain: list[StoredEvent], kind: str, payload: bytes) -> StoredEvent:
    prev = chain[-1].hash if chain else GENESIS_HASH
    return StoredEvent(
        seq=len(chain),
        kind=kind,
        version=1,
        visibility="host",
        payload=payload,
        prev_hash=prev,
        hash=chain_hash(prev, kind, 1, "host", payload),
        recorded_at="2024-01-01T00:00:00Z",
    )


def test_a_sweep_log_recorded_before_placement_existed_still_folds() -> None:
    """The bytes a sweep wrote before sweep-cell-placed existed (its three kinds, as stored) fold as they did: no cell
    placed; a placed attempt is folded onto the cell, and the next attempt's start forgets it."""
    from evoledger.projections.sweep_state import fold_sweep

    chain: list[StoredEvent] = []
    for event, payload in GOLDEN[:3]:
        chain.append(_stored(chain, event.kind, payload))
    old = fold_sweep(from_stored(row) for row in chain)
    cell = old.cells["toy-counter--baseline--seed-0"]
    assert (cell.attempts, cell.last_mode, cell.running, cell.placed) == (2, "resume", False, None)
    assert cell.last_end == GOLDEN[2][0]
    placed, payload = GOLDEN[3]
    chain.append(_stored(chain, placed.kind, payload))
    with_placement = fold_sweep(from_stored(row) for row in chain)
    assert with_placement.cells[cell.cell.name].placed == placed
    again = fold_sweep([SweepCellStarted(cell=cell.cell.name, mode="resume", attempt=3)], with_placement)
    assert again.cells[cell.cell.name].placed is None
