"""Standalone Evaluation facts (host-only): ``evoledger evaluate`` outside any Run.

The Episodes of an Evaluation are recorded with :class:`~evoledger.ledger.events.episodes.EpisodeStarted`
and :class:`~evoledger.ledger.events.episodes.EpisodeFinished` carrying its ``evaluation_id``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from evoledger.ledger.events.base import (
    Count,
    EvaluationId,
    EventBase,
    FiniteFloat,
    FrozenList,
    JsonObject,
    Message,
    ObjectDigest,
    Positive,
    Split,
)
from evoledger.ledger.events.episodes import EpisodeSummary
from evoledger.ledger.events.run import BenchmarkIdentity, Signer, omit_unsigned
from evoledger.ledger.records import Visibility
from pydantic import SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["EvaluationFinished", "EvaluationStarted"]


class EvaluationStarted(EventBase):
    """Records a standalone Evaluation: Benchmark, Program, split, Episode count, seed and settings."""

    kind: Literal["evaluation-started"] = "evaluation-started"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    evaluation_id: EvaluationId
    benchmark: BenchmarkIdentity
    program_digest: ObjectDigest
    split: Split
    episode_count: Positive
    seed: Count
    config: JsonObject = {}
    created_by: Message = ""
    signer: Signer | None = None
    """The key that signs the record's head manifest; ``None`` (and absent from the payload): unsigned."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return omit_unsigned(handler(self), self.signer)


class EvaluationFinished(EventBase):
    """Records the result of a standalone Evaluation: score, Feedback content Object, per-Episode summaries."""

    kind: Literal["evaluation-finished"] = "evaluation-finished"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    evaluation_id: EvaluationId
    score: FiniteFloat | None
    content_digest: ObjectDigest
    episodes: FrozenList[EpisodeSummary]

    @model_validator(mode="after")
    def _check_indices(self) -> Self:
        indices = [e.index for e in self.episodes]
        if len(set(indices)) != len(indices):
            raise PydanticCustomError("duplicate_indices", "each Episode index appears once, got {ix}", {"ix": indices})
        return self
