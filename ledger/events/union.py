"""The one discriminated union of every Event kind, and lookups by kind.

``EVENT_TYPES`` maps each stable ``kind`` to its model; ``Event`` parses any full Event dict (one
that includes ``kind``). The log never stores ``kind`` inside the payload: see ``ledger.events.mapper``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Annotated, Final

from evoledger.ledger.errors import SchemaError, UnknownNameError
from evoledger.ledger.events.agent import AgentExited, AgentStarted, AgentTranscript
from evoledger.ledger.events.base import EventBase
from evoledger.ledger.events.episodes import (
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    InfraFault,
    InfraFaultDetail,
)
from evoledger.ledger.events.evaluation import EvaluationFinished, EvaluationStarted
from evoledger.ledger.events.feedback import BulkEvicted, FeedbackPublished
from evoledger.ledger.events.judging import AssessmentFinished, CandidateSelected, ValidationEpisodeFinished
from evoledger.ledger.events.program_snapshots import ProgramSnapshotted
from evoledger.ledger.events.run import RunCreated, RunEnded, RunKey
from evoledger.ledger.events.submissions import (
    FinishAccepted,
    FinishRejected,
    RequestFailed,
    SubmissionAccepted,
    SubmissionRejected,
)
from evoledger.ledger.events.sweep import SweepCellEnded, SweepCellPlaced, SweepCellStarted, SweepCreated
from evoledger.ledger.records import Visibility
from pydantic import ConfigDict, Field, TypeAdapter

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "Event",
    "current_version",
    "event_types",
    "kind_of",
    "version_of",
    "visibility_of",
]

Event = Annotated[
    RunCreated
    | RunKey
    | ProgramSnapshotted
    | SubmissionAccepted
    | SubmissionRejected
    | EpisodePlanned
    | EpisodeStarted
    | EpisodeFinished
    | InfraFault
    | InfraFaultDetail
    | FeedbackPublished
    | BulkEvicted
    | FinishAccepted
    | FinishRejected
    | RequestFailed
    | AgentStarted
    | AgentExited
    | AgentTranscript
    | ValidationEpisodeFinished
    | CandidateSelected
    | AssessmentFinished
    | RunEnded
    | EvaluationStarted
    | EvaluationFinished
    | SweepCreated
    | SweepCellStarted
    | SweepCellPlaced
    | SweepCellEnded,
    Field(discriminator="kind"),
]
"""Any Event, discriminated by ``kind``."""

EVENT_ADAPTER: Final[TypeAdapter[Event]] = TypeAdapter(Event, config=ConfigDict(defer_build=True))
"""Validates a full Event (``kind`` included) from Python data or JSON."""


def kind_of(cls: type[EventBase]) -> str:
    """The ``kind`` literal a concrete Event class declares."""
    default = cls.model_fields["kind"].default
    if not isinstance(default, str):
        raise SchemaError(f"{cls.__name__} declares no kind default; give it kind: Literal['...'] = '...'")
    return default


def version_of(cls: type[EventBase]) -> int:
    """The current schema version a concrete Event class declares."""
    default = cls.model_fields["version"].default
    if not isinstance(default, int) or isinstance(default, bool) or default < 1:
        raise SchemaError(f"{cls.__name__} declares no version default; give it version: Literal[n] = n")
    return default


def event_types(classes: Iterable[type[EventBase]]) -> Mapping[str, type[EventBase]]:
    """A read-only ``kind -> class`` table, checking every class declares kind, version and visibility."""
    table: dict[str, type[EventBase]] = {}
    for cls in classes:
        kind = kind_of(cls)
        version_of(cls)
        if getattr(cls, "visibility", None) not in ("public", "host"):
            raise SchemaError(f"{cls.__name__} declares no visibility; set visibility: ClassVar = 'public'/'host'")
        if kind in table:
            raise SchemaError(f"kind {kind!r} is declared by both {table[kind].__name__} and {cls.__name__}")
        table[kind] = cls
    return MappingProxyType(dict(sorted(table.items())))


EVENT_TYPES: Final[Mapping[str, type[EventBase]]] = event_types(
    [
        RunCreated,
        RunKey,
        ProgramSnapshotted,
        SubmissionAccepted,
        SubmissionRejected,
        EpisodePlanned,
        EpisodeStarted,
        EpisodeFinished,
        InfraFault,
        InfraFaultDetail,
        FeedbackPublished,
        BulkEvicted,
        FinishAccepted,
        FinishRejected,
        RequestFailed,
        AgentStarted,
        AgentExited,
        AgentTranscript,
        ValidationEpisodeFinished,
        CandidateSelected,
        AssessmentFinished,
        RunEnded,
        EvaluationStarted,
        EvaluationFinished,
        SweepCreated,
        SweepCellStarted,
        SweepCellPlaced,
        SweepCellEnded,
    ]
)
"""Every Event kind this version of evoledger writes, with its model."""


def _lookup(kind: str) -> type[EventBase]:
    try:
        return EVENT_TYPES[kind]
    except KeyError:
        raise UnknownNameError("event kind", kind, EVENT_TYPES) from None


def visibility_of(kind: str) -> Visibility:
    """Whether Events of ``kind`` are ``public`` (may reach the Agent) or ``host`` (never do)."""
    return _lookup(kind).visibility


def current_version(kind: str) -> int:
    """The schema version this library writes for ``kind``; older stored versions are upcast to it."""
    return version_of(_lookup(kind))
