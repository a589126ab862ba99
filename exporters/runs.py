"""A Run's small facts, read in one pass over its log: identity, public spec, Programs, Submissions, verdict.

A record written by ``evoledger evaluate --record-to`` is read the same way: it has no Agent, Submissions
or verdict, only an ``evaluation-started`` Event naming its Benchmark and Program, and its Episodes
(``episode-finished`` with an ``evaluation_id``); its id is the evaluation id.

Exporters read a Run in two kinds of passes. This module is the first: everything whose size grows
with the number of Submissions (never with the number of Episodes or steps), so that the row builders
can stream Episodes and steps afterwards with flat memory. Every pass stops at the head read when the
Run was opened (:attr:`RunFacts.event_count`), so a Run that is still being written exports a
consistent prefix.

The Benchmark's public spec (observation and action spaces, score direction) comes from
``run-created.benchmark_spec``; for records made before that field existed, it is read from the task
text Object the Agent was given (``agent-started.task_digest``), which embeds the spec as a JSON block.
An Evaluation record holds no spec; the caller may supply one (``export_dataset(spec_for=...)``).

Every Episode gets a globally unique id (:func:`episode_id`): the record's id (Run id or evaluation id),
split, owner (Submission id, or ``evaluation``), pool index and attempt, then ``@`` and the first 16 hex
digits of the hash of the Event that recorded the Episode::

    cartpole-0/train/submission-000004/17/1@3b54855e62c3d1f0

The readable part says which Episode it is. The hash chains over the whole log before that Event, so it
differs between any two Events of one log and between two Runs that share a directory name (and so a
Run id), unless their logs agree up to that Episode, in which case it is the same Episode. (One
``assessment-finished`` Event records several Episodes; their pool indices tell them apart.)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evoledger.ledger.errors import InputError, LedgerNotFoundError, ObjectEvictedError
from evoledger.ledger.events import (
    AgentStarted,
    AssessmentFinished,
    BenchmarkIdentity,
    CandidateSelected,
    EvaluationStarted,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    ProgramSnapshotted,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
    from_stored,
)
from evoledger.ledger.records import StoredEvent
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import RunState, fold

__all__ = [
    "RunFacts",
    "SubmissionFacts",
    "episode_id",
    "open_run",
    "public_spec_from_task_text",
    "read_run_facts",
    "stored_events",
]

_RECORD_KINDS: Final = ("run-created", "evaluation-started")
_FACT_KINDS: Final = (
    "run-created",
    "evaluation-started",
    "agent-started",
    "program-snapshotted",
    "submission-accepted",
    "submission-rejected",
    "feedback-published",
    "finish-accepted",
    "finish-rejected",
    "candidate-selected",
    "assessment-finished",
    "run-ended",
)
_JSON_BLOCK: Final = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SubmissionFacts:
    """One accepted Submission: its acceptance, 1-based position and published Feedback (if any)."""

    accepted: SubmissionAccepted
    position: int
    feedback: FeedbackPublished | None = None

    @property
    def submission_id(self) -> str:
        return self.accepted.submission_id


@dataclass(frozen=True)
class RunFacts:
    """What one pass over a Run's non-Episode Events tells (see the module docstring)."""

    path: Path
    head_hash: str
    event_count: int
    created: RunCreated | None
    """The Run's ``run-created`` Event (``None`` for an Evaluation record)."""
    evaluation: EvaluationStarted | None
    """The ``evaluation-started`` Event of an Evaluation record (``None`` for a Run)."""
    spec: Mapping[str, Any] | None
    """The Benchmark's public spec as shown to the Agent, or ``None`` if no task text was recorded."""
    task_digests: tuple[str, ...]
    """The task text Object of each Agent launch, in order (a resumed Run has several)."""
    initial_program: str | None
    programs: Mapping[str, ProgramSnapshotted]
    submissions: tuple[SubmissionFacts, ...]
    finish: FinishAccepted | None
    selection: CandidateSelected | None
    assessment: AssessmentFinished | None
    ended: RunEnded | None
    state: RunState | None = field(repr=False)
    """The Run's folded state (``None`` for an Evaluation record)."""

    @property
    def run_id(self) -> str:
        """The Run id, or the evaluation id of an Evaluation record."""
        if self.created is not None:
            return self.created.run_id
        return self.evaluation.evaluation_id if self.evaluation is not None else ""

    @property
    def benchmark(self) -> BenchmarkIdentity:
        if self.created is not None:
            return self.created.benchmark
        if self.evaluation is None:  # pragma: no cover - read_run_facts sets one of the two
            raise InputError(f"{self.path} is neither a Run nor an evaluation record")
        return self.evaluation.benchmark

    @property
    def benchmark_id(self) -> str:
        return self.benchmark.id

    @property
    def created_by(self) -> str:
        record = self.created or self.evaluation
        return record.created_by if record is not None else ""

    @property
    def observation_space(self) -> Mapping[str, Any] | None:
        return _space(self.spec, "observation_space")

    @property
    def action_space(self) -> Mapping[str, Any] | None:
        return _space(self.spec, "action_space")

    @property
    def score_direction(self) -> str:
        direction = self.spec.get("score_direction") if self.spec is not None else None
        return direction if direction in ("maximize", "minimize") else "maximize"

    @property
    def selected(self) -> str | None:
        """The selected Candidate (by Validation, or by the Run's fallback), if any."""
        return self.state.selected if self.state is not None else None

    def validation_score(self, submission_id: str) -> float | None:
        """The Validation score of Candidate ``submission_id`` (``None`` if it was not validated)."""
        if self.selection is None:
            return None
        for candidate in self.selection.scores:
            if candidate.submission_id == submission_id:
                return candidate.score
        return None

    def assessment_score(self) -> float | None:
        """The selected Candidate's held-out Assessment score, if it was assessed."""
        return self.assessment.score if self.assessment is not None else None

    def best_public_score(self) -> float | None:
        """The best published Feedback score, in the Benchmark's score direction."""
        scores = [s.feedback.score for s in self.submissions if s.feedback is not None and s.feedback.score is not None]
        if not scores:
            return None
        return max(scores) if self.score_direction == "maximize" else min(scores)


def _space(spec: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    value = spec.get(key) if spec is not None else None
    return value if isinstance(value, dict) else None


def public_spec_from_task_text(text: str) -> dict[str, Any] | None:
    """The Benchmark spec embedded in a task text: the first fenced JSON block with both spaces, else ``None``."""
    for match in _JSON_BLOCK.finditer(text):
        try:
            value = json.loads(match.group(1))
        except (ValueError, RecursionError):  # not JSON, nested too deeply, or an over-long integer
            continue
        if (
            isinstance(value, dict)
            and isinstance(value.get("observation_space"), dict)
            and isinstance(value.get("action_space"), dict)
        ):
            return value
    return None


def episode_id(record_id: str, split: str, submission_id: str | None, index: int, attempt: int, event_hash: str) -> str:
    """The globally unique id of an Episode recorded by the Event whose hash is ``event_hash`` (see the module doc)."""
    suffix = event_hash.removeprefix("sha256:")[:16]
    return f"{record_id}/{split}/{submission_id or 'evaluation'}/{index}/{attempt}@{suffix}"


def open_run(run_dir: str | os.PathLike[str]) -> Ledger:
    """Open ``run_dir`` (a Run or an evaluation record) read-only, refusing a missing directory or other ledgers."""
    path = Path(run_dir)
    if not path.exists():
        raise LedgerNotFoundError(
            f"run directory {path} does not exist; pass the directory a Run was recorded to (e.g. runs/cartpole-0)"
        )
    if not path.is_dir():
        raise InputError(f"{path} is a file, not a Run directory; pass the directory a Run was recorded to")
    ledger = Ledger.open(path)
    try:
        first = next(ledger.records(kinds=_RECORD_KINDS), None)
        if first is None:
            raise InputError(
                f"{path} holds a ledger but neither a Run nor an evaluation record; export works on directories "
                "written by `evoledger run` or `evoledger evaluate --record-to`"
            )
    except BaseException:
        ledger.close()
        raise
    return ledger


def stored_events(ledger: Ledger, limit: int, kinds: Collection[str]) -> Iterator[StoredEvent]:
    """Stored rows of ``kinds`` with ``seq < limit``, in log order."""
    for row in ledger.records(kinds=kinds):
        if row.seq >= limit:
            return
        yield row


def _task_spec(ledger: Ledger, digests: tuple[str, ...]) -> dict[str, Any] | None:
    for digest in digests:
        try:
            text = ledger.objects.get(digest).decode("utf-8", errors="replace")
        except ObjectEvictedError:
            continue
        spec = public_spec_from_task_text(text)
        if spec is not None:
            return spec
    return None


def read_run_facts(ledger: Ledger) -> RunFacts:
    """One pass over the Run's non-Episode Events (see :class:`RunFacts`)."""
    head = ledger.head()
    events: list[EventBase] = []
    created: RunCreated | None = None
    evaluation: EvaluationStarted | None = None
    tasks: list[str] = []
    initial: str | None = None
    programs: dict[str, ProgramSnapshotted] = {}
    accepted: list[SubmissionAccepted] = []
    feedback: dict[str, FeedbackPublished] = {}
    finish: FinishAccepted | None = None
    selection: CandidateSelected | None = None
    assessment: AssessmentFinished | None = None
    ended: RunEnded | None = None
    for row in stored_events(ledger, head.count, _FACT_KINDS):
        event = from_stored(row)
        events.append(event)
        if isinstance(event, RunCreated):
            created = created or event
        elif isinstance(event, EvaluationStarted):
            evaluation = evaluation or event
        elif isinstance(event, AgentStarted) and event.task_digest is not None:
            tasks.append(event.task_digest)
        elif isinstance(event, ProgramSnapshotted):
            programs.setdefault(event.program_digest, event)
            if event.source == "initial" and initial is None:
                initial = event.program_digest
        elif isinstance(event, SubmissionAccepted):
            accepted.append(event)
        elif isinstance(event, FeedbackPublished):
            feedback.setdefault(event.submission_id, event)
        elif isinstance(event, FinishAccepted):
            finish = finish or event
        elif isinstance(event, CandidateSelected):
            selection = event
        elif isinstance(event, AssessmentFinished):
            assessment = event
        elif isinstance(event, RunEnded):
            ended = event
    if created is None and evaluation is None:  # open_run checked this; a caller may have opened the ledger itself
        raise InputError(f"{ledger.path} has neither a run-created nor an evaluation-started event")
    submissions = tuple(
        SubmissionFacts(e, position, feedback.get(e.submission_id)) for position, e in enumerate(accepted, start=1)
    )
    task_digests = tuple(tasks)
    return RunFacts(
        path=ledger.path,
        head_hash=head.hash,
        event_count=head.count,
        created=created,
        evaluation=evaluation,
        spec=(dict(created.benchmark_spec) if created is not None else {}) or _task_spec(ledger, task_digests),
        task_digests=task_digests,
        initial_program=initial,
        programs=programs,
        submissions=submissions,
        finish=finish,
        selection=selection,
        assessment=assessment,
        ended=ended,
        state=fold(events) if created is not None else None,
    )
