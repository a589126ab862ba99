"""The Host's answers to Session requests: the ``result`` of an ``ok`` response, one model per method.

Server side only: the Host builds these and sends :meth:`SessionAnswer.wire` (``return`` is the one key that is not
a field name). The ``evoledger-session`` client never imports this module; it reads the answer as plain JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from evoledger.kernel.authoring.benchmark import ScoreDirection
from evoledger.ledger.events import EpisodeStatus, FinishBudgetPolicy
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "EpisodeAnswer",
    "FinishAnswer",
    "SessionAnswer",
    "StatusAnswer",
    "SubmissionAnswer",
    "SubmitAnswer",
]


class SessionAnswer(BaseModel):
    """The base of every answer: frozen, no extra keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object sent as the response's ``result``."""
        return self.model_dump(mode="json", by_alias=True)


class SubmissionAnswer(SessionAnswer):
    """One accepted Submission in a ``status`` answer."""

    submission_id: str
    score: float | None
    """Its public Feedback score; ``null`` before publication or when no Episode counts."""
    episodes: int


class StatusAnswer(SessionAnswer):
    """``status``: budget, limits and the Submissions so far."""

    budget_total: int
    budget_used: int
    budget_left: int
    submissions_used: int
    submissions_left: int
    max_submissions: int
    pool_size: int
    max_episodes_per_submission: int
    max_candidates: int
    finish_budget_policy: FinishBudgetPolicy
    score_direction: ScoreDirection
    primary_metric: str
    finished: bool
    submissions: list[SubmissionAnswer]


class EpisodeAnswer(SessionAnswer):
    """One finished Episode of a ``submit`` answer."""

    index: int
    status: EpisodeStatus
    episode_return: float = Field(alias="return")
    steps: int


class SubmitAnswer(SessionAnswer):
    """``submit`` accepted: the Episodes' outcomes, the public score and where its Feedback is."""

    submission_id: str
    score: float | None
    episodes: list[EpisodeAnswer]
    """Every finished Episode, by index (an infra-faulted one is listed in ``infra_faults`` instead)."""
    infra_faults: list[int]
    budget_used: int
    budget_left: int
    submissions_left: int
    feedback: str
    """The Feedback document's path relative to the workspace."""


class FinishAnswer(SessionAnswer):
    """``finish`` accepted: Agent authority ends."""

    finished: Literal[True]
    candidates: list[str]
    budget_left: int
