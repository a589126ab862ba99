"""The run-state projection: budget, Submissions, finish, judging and the end of a Run, folded from Events.

``apply(state, event) -> state`` is pure; :func:`fold` rebuilds from zero. Maps are persistent
(``immutables.Map``) so each Event costs O(log n) however long the Run, and old states stay valid.
The Host decides requests from this state; ``evoledger replay`` compares it with a fresh fold.

:class:`RunStateBuilder` is the batch path :func:`fold` takes: a private, mutable accumulator that
one fold owns (nobody else ever sees it) and freezes once at the end, so a long log costs a dict
write per Episode instead of rebuilding frozen dataclasses per Event. Its result equals folding
with :func:`apply` Event by Event (a property-based test checks it on generated logs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from evoledger.ledger.events import (
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    InfraFault,
    RunCreated,
    SubmissionAccepted,
    ValidationEpisodeFinished,
)
from immutables import Map

__all__ = ["EpisodeView", "RunState", "RunStateBuilder", "SubmissionView", "apply", "episode_view", "fold"]


@dataclass(frozen=True, slots=True)
class EpisodeView:
    """How one Episode of a Submission (or of a Candidate's Validation) ended."""

    status: str
    episode_return: float
    steps: int
    terminated: bool = False
    truncated: bool = False
    trajectory_digest: str | None = None
    failure_message: str | None = None
    metrics: Map[str, Any] = field(default_factory=Map)


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
    finish_budget_policy: str = "allow_early"
    config: Map[str, Any] = field(default_factory=Map)
    signer: str | None = None
    """The fingerprint of the key ``run-created`` names as the Run's signer; ``None``: an unsigned Run."""
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
    selected: str | None = None
    assessment_score: float | None = None
    assessed: bool = False
    ended_reason: str | None = None
    events: int = 0

    @property
    def submissions_used(self) -> int:
        """Accepted Submissions so far."""
        return len(self.submission_order)

    @property
    def submissions_left(self) -> int:
        """Submissions that may still be accepted."""
        return max(0, self.max_submissions - self.submissions_used)

    def submission(self, submission_id: str) -> SubmissionView | None:
        """The accepted Submission ``submission_id``, if any."""
        return self.submissions.get(submission_id)


def _created_fields(e: RunCreated) -> dict[str, Any]:
    """What ``run-created`` sets (shared by :func:`apply` and :class:`RunStateBuilder`)."""
    return {
        "created": True,
        "run_id": e.run_id,
        "episode_budget": e.episode_budget,
        "max_submissions": e.max_submissions,
        "finish_budget_policy": e.finish_budget_policy,
        "config": Map(e.config),
        "signer": None if e.signer is None else e.signer.fingerprint,
        "budget_left": e.episode_budget,
    }


def _run_created(state: RunState, e: RunCreated) -> RunState:
    return replace(state, **_created_fields(e))


def _submission_accepted(state: RunState, e: SubmissionAccepted) -> RunState:
    view = SubmissionView(
        submission_id=e.submission_id,
        position=len(state.submission_order) + 1,
        program_digest=e.program_digest,
        episodes=tuple(e.episodes),
    )
    return replace(
        state,
        budget_left=e.budget_after,
        charged=state.charged + (e.budget_before - e.budget_after),
        submission_order=(*state.submission_order, e.submission_id),
        submissions=state.submissions.set(e.submission_id, view),
    )


def episode_view(e: EpisodeFinished | ValidationEpisodeFinished) -> EpisodeView:
    """The :class:`EpisodeView` an ``episode-finished`` (or Validation) Event records."""
    message = e.failure.message if e.failure is not None else None
    return EpisodeView(
        e.status, e.episode_return, e.steps, e.terminated, e.truncated, e.trajectory_digest, message, Map(e.metrics)
    )


def _episode_finished(state: RunState, e: EpisodeFinished) -> RunState:
    if e.submission_id is None or e.submission_id not in state.submissions:
        return state  # an Evaluation's Episode: not part of a Run's state
    view = state.submissions[e.submission_id]
    result = episode_view(e)
    view = replace(view, results=view.results.set(e.index, result))
    return replace(state, submissions=state.submissions.set(e.submission_id, view))


def _infra_fault(state: RunState, e: InfraFault) -> RunState:
    if e.submission_id is None or e.submission_id not in state.submissions:
        return state
    view = state.submissions[e.submission_id]
    view = replace(
        view, infra_faulted=view.infra_faulted | frozenset(e.indices), refunded=view.refunded + e.refunded_units
    )
    return replace(
        state,
        budget_left=state.budget_left + e.refunded_units,
        refunded=state.refunded + e.refunded_units,
        submissions=state.submissions.set(e.submission_id, view),
    )


def _feedback_published(state: RunState, e: FeedbackPublished) -> RunState:
    view = state.submissions.get(e.submission_id)
    if view is None:
        return state
    view = replace(view, score=e.score, published=True)
    return replace(state, submissions=state.submissions.set(e.submission_id, view))


def _validation(state: RunState, e: ValidationEpisodeFinished) -> RunState:
    results = state.validation.get(e.submission_id, Map())
    result = episode_view(e)
    return replace(state, validation=state.validation.set(e.submission_id, results.set(e.index, result)))


_HANDLERS: dict[str, Callable[[RunState, Any], RunState]] = {
    "run-created": _run_created,
    "submission-accepted": _submission_accepted,
    "submission-rejected": lambda s, e: replace(s, submission_rejections=s.submission_rejections + 1),
    "episode-finished": _episode_finished,
    "infra-fault": _infra_fault,
    "feedback-published": _feedback_published,
    "finish-accepted": lambda s, e: replace(s, finished=True, candidates=tuple(e.candidates)),
    "finish-rejected": lambda s, e: replace(s, finish_rejections=s.finish_rejections + 1),
    "agent-started": lambda s, e: replace(s, agent_attempts=s.agent_attempts + 1, agent_running=True),
    "agent-exited": lambda s, e: replace(s, agent_running=False, agent_exit_reason=e.reason),
    "validation-episode-finished": _validation,
    "candidate-selected": lambda s, e: replace(s, selected=e.submission_id),
    "assessment-finished": lambda s, e: replace(s, assessment_score=e.score, assessed=True),
    "run-ended": lambda s, e: replace(s, ended_reason=e.reason, selected=e.selected_submission_id or s.selected),
}


def apply(state: RunState, event: EventBase) -> RunState:
    """The state after ``event``. Kinds that do not change run state only advance the event count."""
    handler = _HANDLERS.get(event.kind)
    new = handler(state, event) if handler is not None else state
    return replace(new, events=state.events + 1)


def fold(events: Iterable[EventBase], state: RunState | None = None) -> RunState:
    """Fold ``events`` from ``state`` (default: from zero); equal to applying :func:`apply` to each in turn."""
    builder = RunStateBuilder(state)
    add = builder.add
    for event in events:
        add(event)
    return builder.build()


# -- the batch fold -------------------------------------------------------------------------------------

_SCALARS: Final = tuple(
    f.name for f in fields(RunState) if f.name not in ("submission_order", "submissions", "validation", "events")
)


class _Draft:
    """A Submission being folded: :class:`SubmissionView` with mutable results (owned by one builder)."""

    __slots__ = (
        "episodes",
        "infra_faulted",
        "position",
        "program_digest",
        "published",
        "refunded",
        "results",
        "score",
        "sid",
    )

    def __init__(self, view: SubmissionView) -> None:
        self.sid, self.position, self.program_digest = view.submission_id, view.position, view.program_digest
        self.episodes = view.episodes
        self.results: dict[int, EpisodeView] = dict(view.results.items())
        self.infra_faulted = view.infra_faulted
        self.score, self.published = view.score, view.published
        self.refunded = view.refunded

    def freeze(self) -> SubmissionView:
        return SubmissionView(
            self.sid,
            self.position,
            self.program_digest,
            self.episodes,
            Map(self.results),
            self.infra_faulted,
            self.score,
            self.published,
            self.refunded,
        )


class RunStateBuilder:
    """Folds Events into a :class:`RunState` by mutating private drafts; :meth:`build` freezes the result.

    ``RunStateBuilder(state)`` continues from ``state`` (which is only read). :meth:`add` takes any
    Event; :meth:`episode_finished` is the same step for an ``episode-finished`` Event given as its
    fields (the replay check reads them without building the model). A builder belongs to one fold.
    """

    def __init__(self, state: RunState | None = None) -> None:
        start = state if state is not None else RunState()
        self._s: dict[str, Any] = {name: getattr(start, name) for name in _SCALARS}
        self._order = list(start.submission_order)
        self._subs = {sid: _Draft(view) for sid, view in start.submissions.items()}
        self._validation = {sid: dict(m.items()) for sid, m in start.validation.items()}
        self._events: int = start.events

    def add(self, event: EventBase) -> None:
        """Fold one Event (the same step as :func:`apply`)."""
        kind = event.kind
        if kind == "episode-finished":
            e: Any = event
            self.episode_finished(e.submission_id, e.index, episode_view(e))
            return
        handler = _BUILDERS.get(kind)
        if handler is not None:
            handler(self, event)
        self._events += 1

    def episode_finished(self, submission_id: str | None, index: int, view: EpisodeView) -> None:
        """Fold an ``episode-finished`` Event of ``submission_id`` whose :func:`episode_view` is ``view``."""
        draft = self._subs.get(submission_id) if submission_id is not None else None
        if draft is not None:
            draft.results[index] = view
        self._events += 1

    def build(self) -> RunState:
        """The folded state (the builder may go on folding afterwards)."""
        return RunState(
            **self._s,
            submission_order=tuple(self._order),
            submissions=Map({sid: d.freeze() for sid, d in self._subs.items()}),
            validation=Map({sid: Map(r) for sid, r in self._validation.items()}),
            events=self._events,
        )

    # -- one method per kind (the same rules as the handlers of apply) ----------------------------------
    def _run_created(self, e: RunCreated) -> None:
        self._s.update(_created_fields(e))

    def _submission_accepted(self, e: SubmissionAccepted) -> None:
        s = self._s
        view = SubmissionView(e.submission_id, len(self._order) + 1, e.program_digest, tuple(e.episodes))
        s["budget_left"] = e.budget_after
        s["charged"] += e.budget_before - e.budget_after
        self._order.append(e.submission_id)
        self._subs[e.submission_id] = _Draft(view)

    def _infra_fault(self, e: InfraFault) -> None:
        draft = self._subs.get(e.submission_id) if e.submission_id is not None else None
        if draft is None:
            return
        draft.infra_faulted = draft.infra_faulted | frozenset(e.indices)
        draft.refunded += e.refunded_units
        self._s["budget_left"] += e.refunded_units
        self._s["refunded"] += e.refunded_units

    def _feedback_published(self, e: FeedbackPublished) -> None:
        draft = self._subs.get(e.submission_id)
        if draft is not None:
            draft.score, draft.published = e.score, True

    def _validation_episode(self, e: ValidationEpisodeFinished) -> None:
        self._validation.setdefault(e.submission_id, {})[e.index] = episode_view(e)

    def _set(self, **changes: Any) -> None:
        self._s.update(changes)


def _count(name: str) -> Callable[[RunStateBuilder, Any], None]:
    def bump(builder: RunStateBuilder, e: Any) -> None:
        builder._s[name] += 1

    return bump


_BUILDERS: Final[dict[str, Callable[[RunStateBuilder, Any], None]]] = {
    "run-created": RunStateBuilder._run_created,
    "submission-accepted": RunStateBuilder._submission_accepted,
    "submission-rejected": _count("submission_rejections"),
    "infra-fault": RunStateBuilder._infra_fault,
    "feedback-published": RunStateBuilder._feedback_published,
    "finish-accepted": lambda b, e: b._set(finished=True, candidates=tuple(e.candidates)),
    "finish-rejected": _count("finish_rejections"),
    "agent-started": lambda b, e: b._set(agent_attempts=b._s["agent_attempts"] + 1, agent_running=True),
    "agent-exited": lambda b, e: b._set(agent_running=False, agent_exit_reason=e.reason),
    "validation-episode-finished": RunStateBuilder._validation_episode,
    "candidate-selected": lambda b, e: b._set(selected=e.submission_id),
    "assessment-finished": lambda b, e: b._set(assessment_score=e.score, assessed=True),
    "run-ended": lambda b, e: b._set(ended_reason=e.reason, selected=e.selected_submission_id or b._s["selected"]),
}
