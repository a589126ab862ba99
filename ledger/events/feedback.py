"""Feedback facts: Feedback published for a Submission, and bulk Artifacts evicted by retention."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import (
    Count,
    EventBase,
    EventPart,
    FiniteFloat,
    FrozenList,
    MediaType,
    Message,
    ObjectDigest,
    ProgramPath,
    SubmissionId,
)
from evoledger.ledger.records import Visibility
from pydantic import model_validator
from pydantic_core import PydanticCustomError

__all__ = ["ArtifactRef", "BulkEvicted", "FeedbackPublished", "Retention"]

Retention = Literal["permanent", "bulk"]
"""``permanent`` Artifacts are kept forever; ``bulk`` ones may be evicted oldest-first."""


class ArtifactRef(EventPart):
    """One Artifact of a Feedback: a name (a relative path in the Feedback folder) and its Object."""

    name: ProgramPath
    media_type: MediaType
    digest: ObjectDigest
    size: Count
    retention: Retention


class FeedbackPublished(EventBase):
    """Records the Feedback of a Submission: score, compact content Object, Artifacts, budget state."""

    kind: Literal["feedback-published"] = "feedback-published"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    submission_id: SubmissionId
    score: FiniteFloat | None
    content_digest: ObjectDigest
    artifacts: FrozenList[ArtifactRef] = ()
    budget_used: Count
    budget_left: Count

    @model_validator(mode="after")
    def _check_artifacts(self) -> Self:
        names = [a.name for a in self.artifacts]
        if len(set(names)) != len(names):
            raise PydanticCustomError(
                "duplicate_artifacts", "Artifact names must be distinct, got {names}", {"names": names}
            )
        return self


class BulkEvicted(EventBase):
    """Records that bulk Artifact bytes were evicted; their digests stay in the log."""

    kind: Literal["bulk-evicted"] = "bulk-evicted"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    digests: FrozenList[ObjectDigest]
    submission_ids: FrozenList[SubmissionId]
    reason: Message
    bytes_freed: Count

    @model_validator(mode="after")
    def _check_digests(self) -> Self:
        if not self.digests:
            raise PydanticCustomError("no_digests", "an eviction names at least one digest")
        if len(set(self.digests)) != len(self.digests):
            raise PydanticCustomError("duplicate_digests", "evicted digests must be distinct")
        return self
