"""A Run's small facts, read in one pass over its log: identity, public spec, Programs, Submissions, verdict.

Exporters read a Run in two kinds of passes. This module is the first: everything whose size grows
with the number of Submissions (never with the number of Episodes or steps), so that the row builders
can stream Episodes and steps afterwards with flat memory. Every pass stops at the head read when the
Run was opened (:attr:`RunFacts.event_count`), so a Run that is still being written exports a
consistent prefix.

The Benchmark's public spec (observation and action spaces, score direction) comes from
``run-created.benchmark_spec``; for records made before that field existed, it is read from the task
text Object the Agent was given (``agent-started.task_digest``), which embeds the spec as a JSON block.
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
    CandidateSelected,
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

__all__ = ["RunFacts", "SubmissionFacts", "open_run", "public_spec_from_task_text", "read_run_facts", "stored_events"]

_FACT_KINDS: Final = (
    "run-created",
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
    created: RunCreated
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
    state: RunState = field(repr=False)

    @property
    def run_id(self) -> str:
        return self.created.run_id

    @property
    def benchmark_id(self) -> str:
        return self.created.benchmark.id

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
        return self.state.selected

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


def open_run(run_dir: str | os.PathLike[str]) -> Ledger:
    """Open ``run_dir`` read-only, refusing a missing directory and an evaluation record."""
    path = Path(run_dir)
    if not path.exists():
        raise LedgerNotFoundError(
            f"run directory {path} does not exist; pass the directory a Run was recorded to (e.g. runs/cartpole-0)"
        )
    if not path.is_dir():
        raise InputError(f"{path} is a file, not a Run directory; pass the directory a Run was recorded to")
    ledger = Ledger.open(path)
    try:
        first = next(ledger.records(kinds=("run-created", "evaluation-started")), None)
        if first is None:
            raise InputError(
                f"{path} holds a ledger but no run-created event, so it is not a Run; export works on Run "
                "directories written by `evoledger run`"
            )
        if first.kind == "evaluation-started":
            raise InputError(
                f"{path} is an evaluation record (written by `evoledger evaluate`), not a Run; export works on "
                "Run directories written by `evoledger run`"
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
    if created is None:  # open_run checked this; a caller may have opened the ledger itself
        raise InputError(f"{ledger.path} has no run-created event, so it is not a Run")
    submissions = tuple(
        SubmissionFacts(e, position, feedback.get(e.submission_id)) for position, e in enumerate(accepted, start=1)
    )
    task_digests = tuple(tasks)
    return RunFacts(
        path=ledger.path,
        head_hash=head.hash,
        event_count=head.count,
        created=created,
        spec=dict(created.benchmark_spec) or _task_spec(ledger, task_digests),
        task_digests=task_digests,
        initial_program=initial,
        programs=programs,
        submissions=submissions,
        finish=finish,
        selection=selection,
        assessment=assessment,
        ended=ended,
        state=fold(events),
    )
