"""The run-state projection: budget, Submissions, finish, judging and the end of a Run, folded from Events.

``apply(state, event) -> state`` is pure; :func:`fold` rebuilds from zero. Maps are persistent
(``immutables.Map``) so each Event costs O(log n) however long the Run, and old states stay valid.
The Host decides requests from this state; ``evoledger replay`` compares it with a fresh fold.

Each rule is written once, as one handler per Event kind (``_step``, dispatched on the Event's class).
The handlers drive a :class:`RunStateBuilder`: a private, mutable draft on top of a frozen state, which
one fold owns (nobody else ever sees it) and freezes at the end (:meth:`RunStateBuilder.build`). Only
the Submissions an Event touches are thawed, their results as persistent-map mutations, so
:func:`apply` (one Event) costs O(log n) and :func:`fold` (a whole log) a map write per Episode.

The judging results are part of the state: the Candidates' scores as ``candidate-selected`` records
them, ranked by the selection's rule (``projections.scoring.rank_key``) under the Benchmark's score
direction ``run-created`` records. ``evoledger run``, ``resume`` and ``replay`` summarise them from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple

from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    AssessmentFinished,
    CandidateScore,
    CandidateSelected,
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
    SubmissionRejected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.events.base import EpisodeStatus
from evoledger.ledger.events.run import FinishBudgetPolicy, RunEndReason
from evoledger.projections.handlers import Handlers
from evoledger.projections.scoring import ScoreDirection, rank_candidates
from immutables import Map, MapMutation

__all__ = ["EpisodeView", "RunState", "RunStateBuilder", "SubmissionView", "apply", "episode_view", "fold"]


_NO_METRICS: Final[Map[str, Any]] = Map()


class EpisodeView(NamedTuple):
    """How one Episode of a Submission (or of a Candidate's Validation) ended.

    A named tuple rather than a frozen dataclass: one is made per Episode in every fold, and a tuple
    is made several times faster (replay folds tens of thousands of them)."""

    status: EpisodeStatus
    episode_return: float
    steps: int
    terminated: bool = False
    truncated: bool = False
    trajectory_digest: str | None = None
    failure_message: str | None = None
    metrics: Map[str, Any] = _NO_METRICS


@dataclass(frozen=True, slots=True)
class SubmissionView:
    """One accepted Submission as the log tells it."""

    submission_id: str
    position: int
    program_digest: str
    episodes: tuple[int, ...]
    results: Map[int, EpisodeView] = field(default_factory=Map)
    infra_faulted: frozenset[int] = frozenset()
    score: float | None = None
    published: bool = False
    refunded: int = 0
    """Budget units refunded for this Submission's infra faults (bounded by ``projections.refunds``)."""

    @property
    def policy_failures(self) -> int:
        """Episodes this Submission's Policy failed (infra faults excluded)."""
        return sum(1 for r in self.results.values() if r.status != "ok")

    @property
    def pending(self) -> tuple[int, ...]:
        """Selected Episodes with neither a result nor an infra fault (in flight, or lost in a crash)."""
        return tuple(i for i in self.episodes if i not in self.results and i not in self.infra_faulted)


@dataclass(frozen=True, slots=True)
class RunState:
    """Everything the Host needs to decide the next request, derived from the log alone."""

    created: bool = False
    run_id: str = ""
    episode_budget: int = 0
    max_submissions: int = 0
    finish_budget_policy: FinishBudgetPolicy = "allow_early"
    config: Map[str, Any] = field(default_factory=Map)
    signer: str | None = None
    """The fingerprint of the key ``run-created`` names as the Run's signer; ``None``: an unsigned Run."""
    score_direction: ScoreDirection | None = None
    """The Benchmark's score direction as ``run-created``'s ``benchmark_spec`` records it (``None``: not recorded)."""
    budget_left: int = 0
    charged: int = 0
    refunded: int = 0
    submission_order: tuple[str, ...] = ()
    submissions: Map[str, SubmissionView] = field(default_factory=Map)
    submission_rejections: int = 0
    finished: bool = False
    candidates: tuple[str, ...] = ()
    finish_rejections: int = 0
    agent_attempts: int = 0
    agent_running: bool = False
    agent_exit_reason: str | None = None
    validation: Map[str, Map[int, EpisodeView]] = field(default_factory=Map)
    candidate_scores: tuple[CandidateScore, ...] = ()
    """Every Candidate's judging result as ``candidate-selected`` records it, in finish order."""
    selected: str | None = None
    assessment_score: float | None = None
    assessed: bool = False
    ended_reason: RunEndReason | None = None
    events: int = 0

    @property
    def submissions_used(self) -> int:
        """Accepted Submissions so far."""
        return len(self.submission_order)

    @property
    def submissions_left(self) -> int:
        """Submissions that may still be accepted."""
        return max(0, self.max_submissions - self.submissions_used)

    @property
    def validated(self) -> bool:
        """Whether the Run's configuration validates Candidates on private Episodes (else the public score ranks)."""
        validation = self.config.get("validation")
        episodes = validation.get("episodes") if isinstance(validation, dict) else None
        return not (type(episodes) is int and episodes == 0)

    @property
    def ranking(self) -> tuple[CandidateScore, ...]:
        """The judged Candidates best first, by the selection's rule (direction unknown: ``maximize``)."""
        return tuple(rank_candidates(self.candidate_scores, self.score_direction or "maximize"))

    def submission(self, submission_id: str) -> SubmissionView | None:
        """The accepted Submission ``submission_id``, if any."""
        return self.submissions.get(submission_id)


def episode_view(e: EpisodeFinished | ValidationEpisodeFinished) -> EpisodeView:
    """The :class:`EpisodeView` an ``episode-finished`` (or Validation) Event records."""
    message = e.failure.message if e.failure is not None else None
    metrics = Map(e.metrics) if e.metrics else _NO_METRICS
    return EpisodeView(
        e.status, e.episode_return, e.steps, e.terminated, e.truncated, e.trajectory_digest, message, metrics
    )


def apply(state: RunState, event: EventBase) -> RunState:
    """The state after ``event``. Kinds that do not change run state only advance the event count."""
    builder = RunStateBuilder(state)
    builder.add(event)
    return builder.build()


def fold(events: Iterable[EventBase], state: RunState | None = None) -> RunState:
    """Fold ``events`` from ``state`` (default: from zero); equal to applying :func:`apply` to each in turn."""
    builder = RunStateBuilder(state)
    add = builder.add
    for event in events:
        add(event)
    return builder.build()


# -- the draft the handlers drive ------------------------------------------------------------------------


class _SubmissionDraft:
    """A :class:`SubmissionView` being folded: mutable fields, results as a persistent-map mutation."""

    __slots__ = ("episodes", "infra_faulted", "position", "program_digest", "published", "refunded", "results", "score")

    def __init__(self, view: SubmissionView) -> None:
        self.position, self.program_digest, self.episodes = view.position, view.program_digest, view.episodes
        self.results: MapMutation[int, EpisodeView] = view.results.mutate()
        self.infra_faulted = view.infra_faulted
        self.score, self.published, self.refunded = view.score, view.published, view.refunded

    def freeze(self, submission_id: str) -> SubmissionView:
        return SubmissionView(
            submission_id,
            self.position,
            self.program_digest,
            self.episodes,
            self.results.finish(),
            self.infra_faulted,
            self.score,
            self.published,
            self.refunded,
        )


class RunStateBuilder:
    """The mutable draft of a :class:`RunState` that the handlers drive; :meth:`build` freezes it.

    ``RunStateBuilder(state)`` continues from ``state`` (which is only read): scalar fields are kept in a
    frozen state (:attr:`head`, replaced when they change), and a Submission or a Candidate's Validation
    results are thawed when an Event first touches them. A builder belongs to one fold.
    """

    __slots__ = ("_subs", "_validation", "events", "head")

    def __init__(self, state: RunState | None = None) -> None:
        self._start(state if state is not None else RunState())

    def _start(self, state: RunState) -> None:
        self.head = state
        self.events = state.events
        self._subs: dict[str, _SubmissionDraft] = {}
        self._validation: dict[str, MapMutation[int, EpisodeView]] = {}

    def add(self, event: EventBase) -> None:
        """Fold one Event (the same step as :func:`apply`)."""
        handler = _handler_of(type(event))  # kinds without a handler do not change run state
        if handler is not None:
            handler(event, self)
        self.events += 1

    def build(self) -> RunState:
        """The folded state (the builder may go on folding afterwards)."""
        head = self.head
        submissions, validation = head.submissions, head.validation
        if self._subs:
            with submissions.mutate() as subs:
                for sid, draft in self._subs.items():
                    subs[sid] = draft.freeze(sid)
                submissions = subs.finish()
        if self._validation:
            with validation.mutate() as by_candidate:
                for sid, results in self._validation.items():
                    by_candidate[sid] = results.finish()
                validation = by_candidate.finish()
        state = replace(head, submissions=submissions, validation=validation, events=self.events)
        self._start(state)
        return state

    def submission(self, submission_id: str | None) -> _SubmissionDraft | None:
        """The draft of accepted Submission ``submission_id`` (``None``: unknown, or an Evaluation's)."""
        if submission_id is None:
            return None
        draft = self._subs.get(submission_id)
        if draft is None:
            view = self.head.submissions.get(submission_id)
            if view is None:
                return None
            draft = self._subs[submission_id] = _SubmissionDraft(view)
        return draft

    def validation_results(self, submission_id: str) -> MapMutation[int, EpisodeView]:
        """The Validation results of Candidate ``submission_id`` being folded."""
        results = self._validation.get(submission_id)
        if results is None:
            results = self._validation[submission_id] = self.head.validation.get(submission_id, Map()).mutate()
        return results


# -- one handler per Event kind ---------------------------------------------------------------------------


_HANDLERS: Final[Handlers[RunStateBuilder]] = Handlers()
_handler_of: Final = _HANDLERS.of


@_HANDLERS.on(RunCreated)
def _run_created(e: RunCreated, b: RunStateBuilder) -> None:
    recorded = e.benchmark_spec.get("score_direction")
    direction: ScoreDirection | None = "maximize" if recorded == "maximize" else None
    direction = "minimize" if recorded == "minimize" else direction
    b.head = replace(
        b.head,
        created=True,
        run_id=e.run_id,
        episode_budget=e.episode_budget,
        max_submissions=e.max_submissions,
        finish_budget_policy=e.finish_budget_policy,
        config=Map(e.config),
        signer=None if e.signer is None else e.signer.fingerprint,
        score_direction=direction,
        budget_left=e.episode_budget,
    )


@_HANDLERS.on(SubmissionAccepted)
def _submission_accepted(e: SubmissionAccepted, b: RunStateBuilder) -> None:
    s = b.head
    view = SubmissionView(e.submission_id, len(s.submission_order) + 1, e.program_digest, tuple(e.episodes))
    b.head = replace(
        b.head,
        budget_left=e.budget_after,
        charged=s.charged + (e.budget_before - e.budget_after),
        submission_order=(*s.submission_order, e.submission_id),
        submissions=s.submissions.set(e.submission_id, view),
    )
    b._subs.pop(e.submission_id, None)  # a repeated acceptance starts the Submission afresh


@_HANDLERS.on(SubmissionRejected)
def _submission_rejected(e: SubmissionRejected, b: RunStateBuilder) -> None:
    b.head = replace(b.head, submission_rejections=b.head.submission_rejections + 1)


@_HANDLERS.on(EpisodeFinished)
def _episode_finished(e: EpisodeFinished, b: RunStateBuilder) -> None:
    sid = e.submission_id
    draft = (b._subs.get(sid) if sid is not None else None) or b.submission(sid)  # (the first: the common case)
    if draft is not None:  # else an Evaluation's Episode: not part of a Run's state
        draft.results[e.index] = episode_view(e)


@_HANDLERS.on(InfraFault)
def _infra_fault(e: InfraFault, b: RunStateBuilder) -> None:
    draft = b.submission(e.submission_id)
    if draft is None:
        return
    draft.infra_faulted = draft.infra_faulted | frozenset(e.indices)
    draft.refunded += e.refunded_units
    s = b.head
    b.head = replace(b.head, budget_left=s.budget_left + e.refunded_units, refunded=s.refunded + e.refunded_units)


@_HANDLERS.on(FeedbackPublished)
def _feedback_published(e: FeedbackPublished, b: RunStateBuilder) -> None:
    draft = b.submission(e.submission_id)
    if draft is not None:
        draft.score, draft.published = e.score, True


@_HANDLERS.on(FinishAccepted)
def _finish_accepted(e: FinishAccepted, b: RunStateBuilder) -> None:
    b.head = replace(b.head, finished=True, candidates=tuple(e.candidates))


@_HANDLERS.on(FinishRejected)
def _finish_rejected(e: FinishRejected, b: RunStateBuilder) -> None:
    b.head = replace(b.head, finish_rejections=b.head.finish_rejections + 1)


@_HANDLERS.on(AgentStarted)
def _agent_started(e: AgentStarted, b: RunStateBuilder) -> None:
    b.head = replace(b.head, agent_attempts=b.head.agent_attempts + 1, agent_running=True)


@_HANDLERS.on(AgentExited)
def _agent_exited(e: AgentExited, b: RunStateBuilder) -> None:
    b.head = replace(b.head, agent_running=False, agent_exit_reason=e.reason)


@_HANDLERS.on(ValidationEpisodeFinished)
def _validation_episode(e: ValidationEpisodeFinished, b: RunStateBuilder) -> None:
    b.validation_results(e.submission_id)[e.index] = episode_view(e)


@_HANDLERS.on(CandidateSelected)
def _candidate_selected(e: CandidateSelected, b: RunStateBuilder) -> None:
    b.head = replace(b.head, selected=e.submission_id, candidate_scores=tuple(e.scores))


@_HANDLERS.on(AssessmentFinished)
def _assessment_finished(e: AssessmentFinished, b: RunStateBuilder) -> None:
    b.head = replace(b.head, assessment_score=e.score, assessed=True)


@_HANDLERS.on(RunEnded)
def _run_ended(e: RunEnded, b: RunStateBuilder) -> None:
    b.head = replace(b.head, ended_reason=e.reason, selected=e.selected_submission_id or b.head.selected)
