"""Judging facts (host-only): Validation Episodes, the selected Candidate, and the Assessment.

None of these ever reaches the Agent.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import (
    Count,
    EventBase,
    EventPart,
    FiniteFloat,
    FrozenList,
    Message,
    ObjectDigest,
    PoolIndex,
    Positive,
    SubmissionId,
)
from evoledger.ledger.events.episodes import EpisodeSummary, _EpisodeOutcomeFields
from evoledger.ledger.records import Visibility
from pydantic import model_validator
from pydantic_core import PydanticCustomError

__all__ = ["AssessmentFinished", "CandidateScore", "CandidateSelected", "ValidationEpisodeFinished"]


class ValidationEpisodeFinished(_EpisodeOutcomeFields):
    """Records how one private Validation Episode of a Candidate ended."""

    kind: Literal["validation-episode-finished"] = "validation-episode-finished"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    submission_id: SubmissionId
    program_digest: ObjectDigest
    split: Literal["validation"] = "validation"
    index: PoolIndex
    attempt: Positive = 1


class CandidateScore(EventPart):
    """One Candidate's Validation result and the keys used to rank it."""

    submission_id: SubmissionId
    program_digest: ObjectDigest
    score: FiniteFloat | None
    """The Validation score; ``None`` when no Validation Episode produced one."""
    policy_failures: Count
    finish_position: Positive
    """1-based position of the Candidate in the Agent's finish list."""


class CandidateSelected(EventBase):
    """Records which Candidate Validation selected, every Candidate's score, and how ties were broken."""

    kind: Literal["candidate-selected"] = "candidate-selected"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    submission_id: SubmissionId
    program_digest: ObjectDigest
    scores: FrozenList[CandidateScore]
    tie_break: Message
    """How the ranking was decided: best score, then fewer Policy failures, then earlier finish position."""

    @model_validator(mode="after")
    def _check_selection(self) -> Self:
        ids = [c.submission_id for c in self.scores]
        if len(set(ids)) != len(ids):
            raise PydanticCustomError("duplicate_candidates", "Candidates must be distinct, got {ids}", {"ids": ids})
        chosen = [c for c in self.scores if c.submission_id == self.submission_id]
        if not chosen or chosen[0].program_digest != self.program_digest:
            raise PydanticCustomError(
                "selection_not_scored",
                "the selected {sid} ({digest}) is not among the scored Candidates",
                {"sid": self.submission_id, "digest": self.program_digest},
            )
        return self


class AssessmentFinished(EventBase):
    """Records the held-out Assessment of the selected Program: score and per-Episode summaries."""

    kind: Literal["assessment-finished"] = "assessment-finished"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    submission_id: SubmissionId
    program_digest: ObjectDigest
    split: Literal["assessment"] = "assessment"
    score: FiniteFloat | None
    episode_count: Count
    episodes: FrozenList[EpisodeSummary]

    @model_validator(mode="after")
    def _check_count(self) -> Self:
        if self.episode_count != len(self.episodes):
            raise PydanticCustomError(
                "episode_count",
                "episode_count {n} does not match the {m} Episode summaries",
                {"n": self.episode_count, "m": len(self.episodes)},
            )
        return self
