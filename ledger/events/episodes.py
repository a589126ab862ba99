"""Episode facts: how the Host planned an Episode (host-only) and how it started and ended (public).

Host seeds and scenarios live only in :class:`EpisodePlanned`, a ``host`` Event; the public Events
name an Episode by its pool index alone. An Episode belongs either to a Submission of a Run
(``submission_id``, always on the ``train`` split) or to a standalone Evaluation
(``evaluation_id``); exactly one of the two is set.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import (
    Count,
    EpisodeStatus,
    EvaluationId,
    EventBase,
    EventPart,
    FailureCode,
    FiniteFloat,
    FrozenList,
    JsonObject,
    Message,
    ObjectDigest,
    PoolIndex,
    Positive,
    Split,
    SubmissionId,
)
from evoledger.ledger.records import Visibility
from pydantic import model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "EpisodeFailure",
    "EpisodeFinished",
    "EpisodePlanned",
    "EpisodeStarted",
    "EpisodeSummary",
    "InfraFault",
    "InfraFaultDetail",
]


class EpisodeFailure(EventPart):
    """Why a Policy failed an Episode: a code, a bounded message, and optionally the full traceback Object."""

    code: FailureCode
    message: Message
    traceback_digest: ObjectDigest | None = None


class EpisodeSummary(EventPart):
    """One Episode's outcome in a list (Validation, Assessment and Evaluation summaries)."""

    index: PoolIndex
    status: EpisodeStatus
    episode_return: FiniteFloat
    steps: Count
    trajectory_digest: ObjectDigest


class _EpisodeOwnerFields(EventBase):
    """Fields naming whose Episode this is; not an Event by itself."""

    submission_id: SubmissionId | None = None
    evaluation_id: EvaluationId | None = None
    split: Split

    @model_validator(mode="after")
    def _check_owner(self) -> Self:
        if (self.submission_id is None) == (self.evaluation_id is None):
            raise PydanticCustomError(
                "episode_owner",
                "set exactly one of submission_id and evaluation_id (got {sub!r} and {ev!r})",
                {"sub": self.submission_id, "ev": self.evaluation_id},
            )
        if self.submission_id is not None and self.split != "train":
            raise PydanticCustomError(
                "private_split",
                "a Submission's Episodes are on the train split, not {split!r}; record Validation and "
                "Assessment Episodes with host Events",
                {"split": self.split},
            )
        return self


class _EpisodeOutcomeFields(EventBase):
    """Fields describing how an Episode ended; not an Event by itself."""

    status: EpisodeStatus
    episode_return: FiniteFloat
    steps: Count
    terminated: bool
    truncated: bool
    trajectory_digest: ObjectDigest
    policy_log_digest: ObjectDigest | None = None
    failure: EpisodeFailure | None = None
    metrics: JsonObject = {}
    """The Environment's metrics at the last step (e.g. ``success``); Feedback is recomputed from these."""
    duration_ms: Count | None = None
    """Wall time, optional and not recorded by the Host: identical decisions must give identical hashes."""

    @model_validator(mode="after")
    def _check_failure(self) -> Self:
        if self.status == "ok":
            if self.failure is not None:
                raise PydanticCustomError(
                    "failure_on_ok", "status 'ok' must not carry a failure; set status to the failure code"
                )
        elif self.failure is None or self.failure.code != self.status:
            raise PydanticCustomError(
                "failure_mismatch",
                "status {status!r} needs a failure with the same code (got {failure!r})",
                {"status": self.status, "failure": None if self.failure is None else self.failure.code},
            )
        return self


class EpisodePlanned(EventBase):
    """Records the Host-private seeds and scenario of one pool Episode (never shown to the Agent)."""

    kind: Literal["episode-planned"] = "episode-planned"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    evaluation_id: EvaluationId | None = None
    split: Split
    index: PoolIndex
    env_seed: Count
    policy_seed: Count
    scenario: JsonObject = {}


class EpisodeStarted(_EpisodeOwnerFields):
    """Records that an Episode of a Submission (train split) or of an Evaluation began."""

    kind: Literal["episode-started"] = "episode-started"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    index: PoolIndex
    attempt: Positive = 1


class EpisodeFinished(_EpisodeOwnerFields, _EpisodeOutcomeFields):
    """Records how an Episode of a Submission (train split) or of an Evaluation ended."""

    kind: Literal["episode-finished"] = "episode-finished"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    index: PoolIndex
    attempt: Positive = 1


class InfraFault(_EpisodeOwnerFields):
    """Records an Environment or Host fault that voided Episodes; the Policy is not blamed.

    A Submission's fault is refunded (``refunded_units``) within the Run's refund limits
    (``projections.refunds``); past them it is charged (``refunded_units`` 0) and ``suspicious``: the
    Submission has faulted more often than the Environment or the machine plausibly would. v2 added
    ``suspicious`` (v1 records upcast with ``False``).
    """

    kind: Literal["infra-fault"] = "infra-fault"
    version: Literal[2] = 2
    visibility: ClassVar[Visibility] = "public"

    indices: FrozenList[PoolIndex]
    refunded_units: Count
    reason: Message
    suspicious: bool = False

    @model_validator(mode="after")
    def _check_refund(self) -> Self:
        if not self.indices:
            raise PydanticCustomError("no_indices", "an infra fault names at least one pool index")
        if self.evaluation_id is not None and self.refunded_units != 0:
            raise PydanticCustomError(
                "evaluation_refund",
                "an Evaluation has no budget; refunded_units must be 0, not {n}",
                {"n": self.refunded_units},
            )
        if self.suspicious and self.refunded_units != 0:
            raise PydanticCustomError(
                "suspicious_refund",
                "a suspicious infra fault is charged; refunded_units must be 0, not {n}",
                {"n": self.refunded_units},
            )
        if self.refunded_units > len(self.indices):
            raise PydanticCustomError(
                "over_refund",
                "refunded_units {n} exceeds the {m} affected Episodes; refund at most one unit per Episode",
                {"n": self.refunded_units, "m": len(self.indices)},
            )
        return self


class InfraFaultDetail(_EpisodeOwnerFields):
    """The fault's own account behind a public ``infra-fault`` (host only: the text may hold Host data).

    The public Event says only that the Episode was voided; this one keeps what the Environment, the
    Benchmark or the worker reported, so a Run's infra faults can be diagnosed from its ledger alone.
    """

    kind: Literal["infra-fault-detail"] = "infra-fault-detail"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    index: PoolIndex
    message: Message
