"""Submission and finish facts: what the Agent asked for and what the Host decided.

A refused request is recorded with a bounded summary of what was asked (:func:`request_summary`: the
sha256 of its canonical JSON, its size and its first :data:`REQUEST_PREFIX_CHARS` characters), never the
request itself: an Agent repeating megabyte requests grows the ledger by a few hundred bytes each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from evoledger.ledger.canonical import canonical_json, digest_of
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
from pydantic import JsonValue, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "REQUEST_PREFIX_CHARS",
    "FinishAccepted",
    "FinishRejected",
    "RequestFailed",
    "SubmissionAccepted",
    "SubmissionRejected",
    "request_summary",
]

REQUEST_PREFIX_CHARS: Final = 256
"""How many characters of a refused request's canonical JSON the ledger keeps."""


def request_summary(request: Mapping[str, Any]) -> dict[str, JsonValue]:
    """What the ledger keeps of a refused request: ``request_hash`` (sha256 of its canonical JSON, not an
    Object), ``request_bytes`` and ``request_prefix`` (its first :data:`REQUEST_PREFIX_CHARS` characters).

    >>> request_summary({"episodes": "0:2", "program": "program"})["request_prefix"]
    '{"episodes":"0:2","program":"program"}'
    """
    data = canonical_json(dict(request))
    return {
        "request_hash": digest_of(data),
        "request_bytes": len(data),
        "request_prefix": data.decode("utf-8")[:REQUEST_PREFIX_CHARS],
    }


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
    """A bounded summary of the refused request (:func:`request_summary`)."""


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
    request: JsonObject = {}
    """A bounded summary of the refused request (:func:`request_summary`); empty in older records."""


class RequestFailed(EventBase):
    """A Session request whose handling failed inside the Host (a Host bug, not the request's fault).

    The Agent was answered ``internal_error`` and the Run went on. Host only: the exception's text and
    traceback may hold Host paths and data. ``message`` and ``traceback`` are bounded by the Host (the
    traceback keeps its innermost frames).
    """

    kind: Literal["request-failed"] = "request-failed"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    method: Code
    request: JsonObject = {}
    """A bounded summary of the request (:func:`request_summary`)."""
    error_type: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    message: Message
    traceback: Message
