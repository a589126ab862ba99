"""The learning-curve projection: what a Run's report draws, folded from its Events.

One point per accepted Submission, in order: its public score, the Episodes it selected and was charged
for, the budget spent so far (charged units, refunds deducted), the Policy failures of its Episodes by code,
its infra faults, its Program and the best public score so far (in the Benchmark's score direction). Then
the Candidates, their Validation scores and the selected one, the Assessment, and the Run's facts
(Benchmark, configuration, Agent, terminal reason, budget, head hash).

Everything a Submission, the budget or judging is, comes from the run-state projection
(``projections/run_state.py``), which this fold drives on the same Events; it adds only what run state does
not keep: the Benchmark identity, the Agent's name, the Programs' files, the Assessment's Episodes and the
times.

Times come from the log rows' ``recorded_at`` (recorded, never hashed into a decision), so they are known only
when the fold is given recorded Events (:class:`~evoledger.ledger.store.RecordedEvent`); given bare Events the
times are ``None``. Time in evaluation is, per Submission, from its ``submission-accepted`` to its
``feedback-published``; the Agent's time is the sum of its processes' ``agent-exited`` durations (it includes
its waits on evaluation, so the Agent's own time is the difference); judging is from the last ``agent-exited``
(or ``finish-accepted``) to ``run-ended``.

Unlike the Host's projections this one offers :func:`fold` (and its :class:`LearningCurveBuilder`) but no
``apply``: a report is built from a whole log at once, never kept up to date Event by Event.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    AssessmentFinished,
    CandidateScore,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    ProgramSnapshotted,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
)
from evoledger.ledger.store import RecordedEvent
from evoledger.projections.handlers import Handlers
from evoledger.projections.run_state import RunState, RunStateBuilder
from evoledger.projections.scoring import ScoreDirection

__all__ = ["LearningCurve", "LearningCurveBuilder", "SubmissionPoint", "best_so_far", "fold"]


@dataclass(frozen=True, slots=True)
class SubmissionPoint:
    """One accepted Submission as the report draws it."""

    submission_id: str
    position: int
    """1-based, in acceptance order."""
    program_digest: str
    episodes: int
    """Episodes selected (each costs one unit)."""
    charged: int
    """Budget units charged: the Episodes selected less the units refunded for infra faults."""
    budget_spent: int
    """Cumulative budget spent after this Submission (its refunds deducted)."""
    score: float | None
    """The public Feedback score (``None``: not published, or no Episode counted)."""
    best_so_far: float | None
    """The best public score of this Submission and every earlier one, in the score direction."""
    failures: Mapping[str, int]
    """Policy failures of its Episodes by failure code (``exception``, ``timeout``, ...)."""
    infra_faults: int
    """Its Episodes voided by an infra fault."""
    returns: tuple[float, ...]
    """The returns of its Episodes that ended (ok or failed by the Policy), in pool-index order."""
    evaluation_seconds: float | None = None
    """From its acceptance to its Feedback, where the log has times."""

    @property
    def policy_failures(self) -> int:
        return sum(self.failures.values())


@dataclass(frozen=True, slots=True)
class LearningCurve:
    """A Run's report data (see the module docstring)."""

    state: RunState = field(repr=False)
    """The run state folded from the same Events (budget, Submissions, Candidates, judging)."""
    points: tuple[SubmissionPoint, ...]
    benchmark_id: str
    benchmark_params: Mapping[str, Any]
    agent: str | None
    agent_settings: str
    """What makes this Agent another contestant than the same Agent set otherwise: its model, effort, extra
    arguments and image viewing as configured (``model=opus, effort=high``; empty when none is set). The folder
    and binary it ran from are left out: they name where it ran, not what it was."""
    created_by: str
    seed: int | None
    head_hash: str | None
    """The hash of the last recorded Event folded (``None``: folded from bare Events)."""
    initial_program: str | None
    programs: Mapping[str, Mapping[str, str]]
    """Every snapshotted Program: its digest -> its files (path -> Object digest)."""
    assessment_returns: tuple[float, ...]
    end_message: str
    agent_seconds: float | None
    evaluation_seconds: float | None
    judging_seconds: float | None

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def agent_label(self) -> str | None:
        """The Agent's name with its settings, if any (``claude-code (model=opus)``); None if none started."""
        if self.agent is None:
            return None
        return f"{self.agent} ({self.agent_settings})" if self.agent_settings else self.agent

    @property
    def direction(self) -> ScoreDirection:
        return self.state.score_direction or "maximize"

    @property
    def candidates(self) -> tuple[CandidateScore, ...]:
        """The judged Candidates best first (empty before judging)."""
        return self.state.ranking

    @property
    def selected(self) -> str | None:
        return self.state.selected

    @property
    def assessment_score(self) -> float | None:
        return self.state.assessment_score

    @property
    def best_public_score(self) -> float | None:
        return self.points[-1].best_so_far if self.points else None

    def validation_score(self, submission_id: str) -> float | None:
        """The Validation score of Candidate ``submission_id`` (``None``: not validated, or no score)."""
        return next((c.score for c in self.state.candidate_scores if c.submission_id == submission_id), None)

    def failures_by_code(self) -> dict[str, int]:
        """Policy failures of every Submission's Episodes, by code."""
        total: Counter[str] = Counter()
        for point in self.points:
            total.update(point.failures)
        return dict(sorted(total.items()))


_CONTESTANT_SETTINGS: Final = ("model", "effort", "args", "view_image")


def _agent_settings(config: Mapping[str, Any]) -> str:
    """The Agent settings of a Run's recorded configuration that make it another contestant (see ``agent_settings``).

    >>> _agent_settings({"agent": {"name": "codex", "model": "o3", "args": ["-c", "x=1"], "home": "/h"}})
    'model=o3, args=-c x=1'
    >>> _agent_settings({"agent": {"name": "codex", "args": ["a b"]}})  # one argument, told from two
    "args='a b'"
    """
    agent = config.get("agent")
    if not isinstance(agent, Mapping):
        return ""
    parts = []
    for key in _CONTESTANT_SETTINGS:
        value = agent.get(key)
        if value is None or value is False or value == "" or value == []:
            continue
        if value is True:
            value = "yes"
        parts.append(f"{key}={shlex.join(str(v) for v in value) if isinstance(value, list) else value}")
    return ", ".join(parts)


def best_so_far(scores: Iterable[float | None], direction: ScoreDirection) -> list[float | None]:
    """The running best of ``scores`` (``None`` skipped; ``None`` until the first score).

    >>> best_so_far([None, 3.0, 1.0, 5.0], "maximize")
    [None, 3.0, 3.0, 5.0]
    >>> best_so_far([4.0, None, 2.0], "minimize")
    [4.0, 4.0, 2.0]
    """
    best: float | None = None
    out: list[float | None] = []
    for score in scores:
        if score is not None and (best is None or (score > best if direction == "maximize" else score < best)):
            best = score
        out.append(best)
    return out


def fold(events: Iterable[EventBase | RecordedEvent]) -> LearningCurve:
    """The learning curve of ``events`` (bare Events, or recorded ones, which also give times and the head hash)."""
    builder = LearningCurveBuilder()
    for item in events:
        builder.add(item)
    return builder.build()


class LearningCurveBuilder:
    """The mutable draft one fold owns: run state plus what run state does not keep."""

    def __init__(self) -> None:
        self.run = RunStateBuilder()
        self.created: RunCreated | None = None
        self.agent: str | None = None
        self.head_hash: str | None = None
        self.initial_program: str | None = None
        self.programs: dict[str, Mapping[str, str]] = {}
        self.assessment_returns: tuple[float, ...] = ()
        self.end_message = ""
        self.agent_ms: int | None = None
        self.accepted_at: dict[str, datetime] = {}
        self.evaluation: dict[str, float] = {}
        self.judging_from: datetime | None = None
        self.judging_seconds: float | None = None
        self.now: datetime | None = None

    def add(self, item: EventBase | RecordedEvent) -> None:
        """Fold one Event (a recorded one also advances the clock and the head hash)."""
        if isinstance(item, RecordedEvent):
            event = item.event
            self.head_hash = item.stored.hash
            self.now = _time(item.stored.recorded_at)
        else:
            event, self.now = item, None
        self.run.add(event)
        handler = _handler_of(type(event))
        if handler is not None:
            handler(event, self)

    def build(self) -> LearningCurve:
        state = self.run.build()
        created = self.created
        direction = state.score_direction or "maximize"
        views = [state.submissions[sid] for sid in state.submission_order]
        bests = best_so_far((v.score for v in views), direction)
        points: list[SubmissionPoint] = []
        spent = 0
        for view, best in zip(views, bests, strict=True):
            charged = len(view.episodes) - view.refunded
            spent += charged
            results = [view.results[i] for i in sorted(view.results)]
            points.append(
                SubmissionPoint(
                    submission_id=view.submission_id,
                    position=view.position,
                    program_digest=view.program_digest,
                    episodes=len(view.episodes),
                    charged=charged,
                    budget_spent=spent,
                    score=view.score,
                    best_so_far=best,
                    failures=dict(sorted(Counter(r.status for r in results if r.status != "ok").items())),
                    infra_faults=len(view.infra_faulted),
                    returns=tuple(r.episode_return for r in results),
                    evaluation_seconds=self.evaluation.get(view.submission_id),
                )
            )
        evaluation = sum(self.evaluation.values()) if self.evaluation else None
        return LearningCurve(
            state=state,
            points=tuple(points),
            benchmark_id=created.benchmark.id if created is not None else "",
            benchmark_params=dict(created.benchmark.params) if created is not None else {},
            agent=self.agent,
            agent_settings=_agent_settings(created.config) if created is not None else "",
            created_by=created.created_by if created is not None else "",
            seed=created.seed if created is not None else None,
            head_hash=self.head_hash,
            initial_program=self.initial_program,
            programs=dict(self.programs),
            assessment_returns=self.assessment_returns,
            end_message=self.end_message,
            agent_seconds=None if self.agent_ms is None else self.agent_ms / 1000,
            evaluation_seconds=evaluation,
            judging_seconds=self.judging_seconds,
        )


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:  # a record is untrusted: an unreadable time is no time
        return None


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    try:
        seconds = (end - start).total_seconds()
    except TypeError:  # one aware, one naive
        return None
    return seconds if seconds >= 0 else None


_HANDLERS: Final[Handlers[LearningCurveBuilder]] = Handlers()
_handler_of: Final = _HANDLERS.of


@_HANDLERS.on(RunCreated)
def _run_created(e: RunCreated, b: LearningCurveBuilder) -> None:
    b.created = b.created or e


@_HANDLERS.on(AgentStarted)
def _agent_started(e: AgentStarted, b: LearningCurveBuilder) -> None:
    b.agent = b.agent or e.agent


@_HANDLERS.on(AgentExited)
def _agent_exited(e: AgentExited, b: LearningCurveBuilder) -> None:
    b.agent_ms = (b.agent_ms or 0) + e.duration_ms
    b.judging_from = b.now or b.judging_from


@_HANDLERS.on(ProgramSnapshotted)
def _program_snapshotted(e: ProgramSnapshotted, b: LearningCurveBuilder) -> None:
    b.programs.setdefault(e.program_digest, dict(e.files))
    if e.source == "initial" and b.initial_program is None:
        b.initial_program = e.program_digest


@_HANDLERS.on(SubmissionAccepted)
def _submission_accepted(e: SubmissionAccepted, b: LearningCurveBuilder) -> None:
    if b.now is not None:
        b.accepted_at[e.submission_id] = b.now


@_HANDLERS.on(FeedbackPublished)
def _feedback_published(e: FeedbackPublished, b: LearningCurveBuilder) -> None:
    seconds = _seconds(b.accepted_at.pop(e.submission_id, None), b.now)
    if seconds is not None:
        b.evaluation[e.submission_id] = seconds


@_HANDLERS.on(FinishAccepted)
def _finish_accepted(e: FinishAccepted, b: LearningCurveBuilder) -> None:
    b.judging_from = b.now


@_HANDLERS.on(AssessmentFinished)
def _assessment_finished(e: AssessmentFinished, b: LearningCurveBuilder) -> None:
    b.assessment_returns = tuple(s.episode_return for s in e.episodes)


@_HANDLERS.on(RunEnded)
def _run_ended(e: RunEnded, b: LearningCurveBuilder) -> None:
    b.end_message = e.message
    b.judging_seconds = _seconds(b.judging_from, b.now)
