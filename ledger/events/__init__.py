"""The Event schema: every fact a Run or an Evaluation records, and its mapping to log rows.

Events are frozen pydantic models (``kind`` + ``version`` + a declared ``visibility``); ``Event``
is their discriminated union. :func:`to_pending` / :func:`from_stored` map them to and from the
log's records (payloads never repeat ``kind``/``version``); :func:`object_refs` lists the Object
digests an Event refers to, by the naming convention documented in ``ledger.events.base``.
"""

from evoledger.ledger.events.agent import AgentExited, AgentStarted
from evoledger.ledger.events.base import (
    Code,
    ContentHash,
    Count,
    EpisodeStatus,
    EvaluationId,
    EventBase,
    EventPart,
    FailureCode,
    FiniteFloat,
    FrozenList,
    JsonObject,
    MediaType,
    Message,
    Name,
    ObjectDigest,
    PoolIndex,
    Positive,
    ProgramPath,
    RunId,
    Split,
    SubmissionId,
    check_program_path,
)
from evoledger.ledger.events.episodes import (
    EpisodeFailure,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    InfraFault,
    InfraFaultDetail,
)
from evoledger.ledger.events.evaluation import EvaluationFinished, EvaluationStarted
from evoledger.ledger.events.feedback import ArtifactRef, BulkEvicted, FeedbackPublished, Retention
from evoledger.ledger.events.judging import (
    AssessmentFinished,
    CandidateScore,
    CandidateSelected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.events.mapper import EventCodec, encode_payload, from_stored, to_pending
from evoledger.ledger.events.programs import ProgramSnapshotted, SnapshotSource
from evoledger.ledger.events.references import is_reference_field, object_refs, payload_object_refs, typed_object_refs
from evoledger.ledger.events.run import (
    LEDGER_FORMAT_VERSION,
    BenchmarkIdentity,
    FinishBudgetPolicy,
    RunCreated,
    RunEnded,
    RunEndReason,
)
from evoledger.ledger.events.submissions import (
    FinishAccepted,
    FinishRejected,
    SubmissionAccepted,
    SubmissionRejected,
)
from evoledger.ledger.events.union import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    Event,
    current_version,
    event_types,
    kind_of,
    version_of,
    visibility_of,
)
from evoledger.ledger.events.upcasting import UPCASTERS, Upcaster, UpcasterRegistry

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "LEDGER_FORMAT_VERSION",
    "UPCASTERS",
    "AgentExited",
    "AgentStarted",
    "ArtifactRef",
    "AssessmentFinished",
    "BenchmarkIdentity",
    "BulkEvicted",
    "CandidateScore",
    "CandidateSelected",
    "Code",
    "ContentHash",
    "Count",
    "EpisodeFailure",
    "EpisodeFinished",
    "EpisodePlanned",
    "EpisodeStarted",
    "EpisodeStatus",
    "EpisodeSummary",
    "EvaluationFinished",
    "EvaluationId",
    "EvaluationStarted",
    "Event",
    "EventBase",
    "EventCodec",
    "EventPart",
    "FailureCode",
    "FeedbackPublished",
    "FinishAccepted",
    "FinishBudgetPolicy",
    "FinishRejected",
    "FiniteFloat",
    "FrozenList",
    "InfraFault",
    "InfraFaultDetail",
    "JsonObject",
    "MediaType",
    "Message",
    "Name",
    "ObjectDigest",
    "PoolIndex",
    "Positive",
    "ProgramPath",
    "ProgramSnapshotted",
    "Retention",
    "RunCreated",
    "RunEndReason",
    "RunEnded",
    "RunId",
    "SnapshotSource",
    "Split",
    "SubmissionAccepted",
    "SubmissionId",
    "SubmissionRejected",
    "Upcaster",
    "UpcasterRegistry",
    "ValidationEpisodeFinished",
    "check_program_path",
    "current_version",
    "encode_payload",
    "event_types",
    "from_stored",
    "is_reference_field",
    "kind_of",
    "object_refs",
    "payload_object_refs",
    "to_pending",
    "typed_object_refs",
    "version_of",
    "visibility_of",
]
