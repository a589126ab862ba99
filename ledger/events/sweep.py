"""Sweep facts: which Runs a sweep is made of (one per cell), and how each cell's process started and ended.

A sweep (``evoledger sweep SWEEP.toml --out DIR``) records these in its own ledger in ``DIR``, with the same log
machinery as a Run; each cell's Run keeps its own ledger under ``DIR/runs/<cell>/``, which stays the truth about that
Run. The sweep's log says which Run is which cell, every attempt at running it (a new Run or a ``resume``) and what
each attempt ended with, including the Run's head hash at that moment, so the sweep record names the exact prefix of
each Run's log it saw; when the sweep places its Runs on a Ray cluster (``--backend ray``), also the node that ran
each attempt. All of it is Host-only: no Agent ever sees a sweep.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from evoledger.ledger.events.base import (
    ContentHash,
    Count,
    EventBase,
    EventPart,
    FiniteFloat,
    FrozenList,
    JsonObject,
    Message,
    ObjectDigest,
    Positive,
    RunId,
    SubmissionId,
)
from evoledger.ledger.events.run import RunEndReason
from evoledger.ledger.records import Visibility
from pydantic import Field, StringConstraints

__all__ = [
    "CellName",
    "SweepCell",
    "SweepCellEnded",
    "SweepCellOutcome",
    "SweepCellPlaced",
    "SweepCellStarted",
    "SweepCreated",
]

CellName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
"""A cell's name, which is also its Run's directory name under ``runs/`` (and so its Run id)."""

SweepCellOutcome = Literal["finished", "ended", "failed", "interrupted"]
"""How one attempt at a cell ended: ``finished`` (the Run ended with a selected Candidate), ``ended`` (the Run ended
another way: ``reason`` says which), ``failed`` (its process exited before its Run ended), ``interrupted`` (the sweep
was stopped and stopped it)."""

_Text = Annotated[str, StringConstraints(min_length=1, max_length=1024)]


class SweepCell(EventPart):
    """One cell of a sweep: a Benchmark with its settings, an Agent with its options, a seed and the Run settings."""

    name: CellName
    benchmark: _Text
    """The Benchmark's name as the sweep file gives it (a catalogue name or an alias)."""
    settings: JsonObject = {}
    """Its ``--set`` settings."""
    agent: _Text
    agent_options: JsonObject = {}
    """The Agent's ``--agent-option`` values (model, effort, ...)."""
    seed: Annotated[int, Field(ge=0, lt=2**63)]
    run: JsonObject = {}
    """The Run settings of this cell (``RunConfig`` fields; the sweep's, then the Benchmark's, then the Agent's)."""


class SweepCreated(EventBase):
    """Records a sweep: its name, the sweep file it was expanded from (an Object) and every cell, in order."""

    kind: Literal["sweep-created"] = "sweep-created"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    sweep_id: RunId
    source_digest: ObjectDigest
    """The sweep file's text as an Object (``evoledger ledger show DIR <digest>`` prints it)."""
    cells: FrozenList[SweepCell] = Field(min_length=1, max_length=100_000)
    created_by: Annotated[str, StringConstraints(max_length=256)] = ""


class SweepCellStarted(EventBase):
    """Records that a cell's process was started: a new Run, or a ``resume`` of its Run."""

    kind: Literal["sweep-cell-started"] = "sweep-cell-started"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    cell: CellName
    mode: Literal["run", "resume"]
    attempt: Positive
    """1 for the cell's first process, then one more for each later one (across every invocation of the sweep)."""
    workers: Positive | None = None
    """The ``--workers`` it was given (a new Run only; a resumed Run keeps its recorded workers)."""


class SweepCellPlaced(EventBase):
    """Records where a cell's process runs when the sweep placed it on a Ray cluster: the node that took it (after
    that node confirmed it sees the sweep's folder) and the process id there. Recorded after ``sweep-cell-started``
    of the same attempt; a sweep whose Runs run on the sweep's own machine records none."""

    kind: Literal["sweep-cell-placed"] = "sweep-cell-placed"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    cell: CellName
    attempt: Positive
    """The attempt (as ``sweep-cell-started`` numbers it) that runs there."""
    node_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{1,128}$")]
    """Ray's id of the node."""
    hostname: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    address: Annotated[str, StringConstraints(max_length=255)] = ""
    """The node's IP address as Ray knows it."""
    pid: Positive
    """The process id of the cell's ``evoledger run`` or ``resume`` on that node."""


class SweepCellEnded(EventBase):
    """Records how a cell's process ended, and its Run's state then (read from the Run's own ledger)."""

    kind: Literal["sweep-cell-ended"] = "sweep-cell-ended"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    cell: CellName
    outcome: SweepCellOutcome
    exit_code: int | None = None
    """The process's exit code (negative: the signal that ended it); ``None``: the sweep found the Run ended on disk
    without a process of its own (e.g. the sweep was killed after the Run ended)."""
    reason: RunEndReason | None = None
    """The Run's terminal reason, when it ended."""
    selected_submission_id: SubmissionId | None = None
    assessment_score: FiniteFloat | None = None
    budget_used: Count = 0
    run_head_hash: ContentHash | None = None
    """The head of the Run's log when the cell ended (``None``: the Run has no ledger)."""
    run_events: Count = 0
    message: Message = ""
