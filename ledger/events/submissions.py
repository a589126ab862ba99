"""Submission and finish facts: what the Agent asked for and what the Host decided."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import (
    Code,
    Count,
    EventBase,
    FrozenList,
    JsonObject,
    Message,
    ObjectDigest,
    PoolIndex,
    Positive,
    SubmissionId,
)
from evoledger.ledger.records import Visibility
from pydantic import model_validator
from pydantic_core import PydanticCustomError

__all__ = ["FinishAccepted", "FinishRejected", "SubmissionAccepted", "SubmissionRejected"]


class SubmissionAccepted(EventBase):
    """Records an accepted Submission: its Program, its train pool indices and the budget it consumed."""

    kind: Literal["submission-accepted"] = "submission-accepted"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    submission_id: SubmissionId
    program_digest: ObjectDigest
    episodes: FrozenList[PoolIndex]
    """The selected train pool indices, strictly increasing; each costs one budget unit."""
    budget_before: Count
    budget_after: Count
    submissions_used: Positive
    """How many Submissions have been accepted so far, this one included."""

    @model_validator(mode="after")
    def _check_budget(self) -> Self:
        if not self.episodes:
            raise PydanticCustomError("no_episodes", "a Submission selects at least one Episode")
        if any(b <= a for a, b in zip(self.episodes, self.episodes[1:], strict=False)):
            raise PydanticCustomError(
                "episode_order", "episodes must be strictly increasing, got {eps}", {"eps": list(self.episodes)}
            )
        if self.budget_after != self.budget_before - len(self.episodes):
            raise PydanticCustomError(
                "budget_arithmetic",
                "budget_after {after} != budget_before {before} - {n} Episodes",
                {"after": self.budget_after, "before": self.budget_before, "n": len(self.episodes)},
            )
        return self


class SubmissionRejected(EventBase):
    """Records a refused Submission request: a stable code, a message and whether retrying can help."""

    kind: Literal["submission-rejected"] = "submission-rejected"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    code: Code
    message: Message
    retryable: bool
    request: JsonObject = {}
    """A summary of the refused request (e.g. the episode ranges asked for)."""


class FinishAccepted(EventBase):
    """Records the Agent's accepted finish: its Candidates in order of preference, and unused budget."""

    kind: Literal["finish-accepted"] = "finish-accepted"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    candidates: FrozenList[SubmissionId]
    budget_left: Count

    @model_validator(mode="after")
    def _check_candidates(self) -> Self:
        if not self.candidates:
            raise PydanticCustomError("no_candidates", "finish names at least one Candidate")
        if len(set(self.candidates)) != len(self.candidates):
            raise PydanticCustomError(
                "duplicate_candidates", "Candidates must be distinct, got {c}", {"c": list(self.candidates)}
            )
        return self


class FinishRejected(EventBase):
    """Records a refused finish request: a stable code, a message and whether retrying can help."""

    kind: Literal["finish-rejected"] = "finish-rejected"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    code: Code
    message: Message
    retryable: bool
