"""Turning Episode outcomes into ledger Objects and Events: one place for evaluate(), the Host and judging."""

from __future__ import annotations

from typing import Protocol

from evoledger.kernel.execution import EpisodeOutcome
from evoledger.ledger.events import (
    EpisodeFailure,
    EpisodeFinished,
    EventBase,
    InfraFault,
    InfraFaultDetail,
    ValidationEpisodeFinished,
)

__all__ = [
    "MAX_MESSAGE_CHARS",
    "PUBLIC_INFRA_REASON",
    "SUSPICIOUS_REASON",
    "ObjectSink",
    "outcome_events",
    "validation_event",
]

PUBLIC_INFRA_REASON = "The Environment or the Host failed during this Episode; it is not counted against the Policy."
SUSPICIOUS_REASON = (
    " The unit was charged: this Submission or Run has had more infra faults than its refund limit allows, so"
    " the fault is reported as suspicious."
)
MAX_MESSAGE_CHARS = 4000
"""Failure messages are cut to this length in Events; the full traceback is an Object."""


class ObjectSink(Protocol):
    """Where Objects go (the ledger's Object store)."""

    def put(self, data: bytes) -> str: ...


def _failure(outcome: EpisodeOutcome, objects: ObjectSink) -> EpisodeFailure | None:
    if outcome.status == "ok" or outcome.status == "infra_fault":
        return None
    traceback_digest = objects.put(outcome.traceback.encode("utf-8")) if outcome.traceback else None
    return EpisodeFailure(
        code=outcome.status,
        message=(outcome.failure_message or outcome.status)[:MAX_MESSAGE_CHARS],
        traceback_digest=traceback_digest,
    )


def outcome_events(
    outcome: EpisodeOutcome,
    objects: ObjectSink,
    *,
    submission_id: str | None = None,
    evaluation_id: str | None = None,
    refund: bool = False,
    suspicious: bool = False,
) -> list[EventBase]:
    """The Event recording how a Submission's or an Evaluation's Episode ended (its Objects stored first).

    An infra fault becomes an ``infra-fault`` Event (refunding one unit when ``refund``), never a Policy failure,
    followed by the host-only ``infra-fault-detail`` that keeps what the fault reported (the public Event
    never carries the Environment's own text, which may reveal Host-private data). ``suspicious``: the fault is
    past the Run's refund limits (``projections.refunds``) and charged instead of refunded.
    """
    split = outcome.split
    if outcome.status == "infra_fault":
        return [
            InfraFault(
                submission_id=submission_id,
                evaluation_id=evaluation_id,
                split=split,
                indices=(outcome.index,),
                refunded_units=1 if refund and not suspicious else 0,
                # Public: never the Environment's own exception text, which may reveal Host-private data.
                reason=PUBLIC_INFRA_REASON
                + (SUSPICIOUS_REASON if suspicious else " The unit was refunded." if refund else ""),
                suspicious=suspicious,
            ),
            InfraFaultDetail(
                submission_id=submission_id,
                evaluation_id=evaluation_id,
                split=split,
                index=outcome.index,
                message=(outcome.failure_message or "no detail was reported")[:MAX_MESSAGE_CHARS],
            ),
        ]
    return [
        EpisodeFinished(
            submission_id=submission_id,
            evaluation_id=evaluation_id,
            split=split,
            index=outcome.index,
            status=outcome.status,
            episode_return=outcome.episode_return,
            steps=outcome.steps,
            terminated=outcome.terminated,
            truncated=outcome.truncated,
            trajectory_digest=objects.put(outcome.trajectory or b""),
            policy_log_digest=objects.put(outcome.policy_log) if outcome.policy_log else None,
            failure=_failure(outcome, objects),
            metrics=dict(outcome.metrics),
        )
    ]


def validation_event(
    outcome: EpisodeOutcome, objects: ObjectSink, *, submission_id: str, program_digest: str
) -> ValidationEpisodeFinished:
    """The host Event recording one Validation Episode of a Candidate (infra faults count as failures here
    only after retries are exhausted; the caller decides)."""
    status = "exception" if outcome.status == "infra_fault" else outcome.status
    failure = _failure(outcome, objects)
    if outcome.status == "infra_fault":
        message = "infra fault past the Candidate's retry limit, counted as its failure: " + (
            outcome.failure_message or ""
        )
        failure = EpisodeFailure(code="exception", message=message[:MAX_MESSAGE_CHARS])
    return ValidationEpisodeFinished(
        submission_id=submission_id,
        program_digest=program_digest,
        index=outcome.index,
        status=status,
        episode_return=outcome.episode_return,
        steps=outcome.steps,
        terminated=outcome.terminated,
        truncated=outcome.truncated,
        trajectory_digest=objects.put(outcome.trajectory or b""),
        policy_log_digest=objects.put(outcome.policy_log) if outcome.policy_log else None,
        failure=failure,
        metrics=dict(outcome.metrics),
    )
