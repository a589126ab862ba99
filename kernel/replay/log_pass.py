"""The one pass over a Run's log that feeds the protocol audit and the three projection folds.

Every payload is parsed once, by the audit (:meth:`AuditFold.parsed`, orjson), and the parsed dict is
shared: an ``episode-finished`` payload the reader of ``kernel.replay.episode_reader`` can vouch for
becomes its Event without pydantic validation, folded by the projections' own handlers like any other
Event; every other folded kind is validated
with pydantic (``from_stored``) exactly as before, and a payload that fails is a ``schema`` finding
and is left out of the projections. ``episode-started``, ``episode-planned`` and
``program-snapshotted`` change none of the three projections and are not parsed for them.

The pass also notes the Object digests each vouched-for Episode references, so the integrity check
need not scan those payloads again: only for a payload without escapes (so every ``sha256:`` in its
bytes is one in the dict) whose every ``sha256:`` is one of the digest fields the reader validated
-- then ``referenced_digests`` returns exactly these (the schema's reference convention).

When checks 1-2 run in a side process (``kernel.replay.side_process``) the two halves run apart:
:func:`audit_log` there, :func:`fold_projections` here (parsing the Episodes' payloads itself); they
give exactly what :func:`fold_log` gives (a test compares them).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from evoledger.kernel.replay.episode_reader import EpisodeReader
from evoledger.kernel.replay.report import Finding
from evoledger.ledger.errors import LedgerError
from evoledger.ledger.events import current_version, from_stored
from evoledger.ledger.records import StoredEvent
from evoledger.ledger.verify import LogRow
from evoledger.projections import retention
from evoledger.projections.audit import AuditFold, AuditReport
from evoledger.projections.mirror import MirrorBuilder, MirrorState
from evoledger.projections.retention import RetentionState
from evoledger.projections.run_state import RunState, RunStateBuilder

__all__ = ["UNFOLDED_KINDS", "FoldedLog", "FoldedProjections", "audit_log", "fold_log", "fold_projections"]

UNFOLDED_KINDS: Final = frozenset(
    {
        "episode-started",
        "episode-planned",
        "program-snapshotted",
        "infra-fault-detail",
        "request-failed",
        "run-key",
    }
)
"""Kinds that change neither the run state, the mirror nor retention: not parsed for the projections."""

_LOADS: Final = orjson.loads
_EPISODE: Final = "episode-finished"
_EPISODE_VERSION: Final = current_version(_EPISODE)


@dataclass(frozen=True, slots=True)
class FoldedProjections:
    """The three projections folded from a log, and the Events that could not be folded."""

    run_state: RunState
    mirror: MirrorState
    retention: RetentionState
    findings: tuple[Finding, ...]
    """``schema`` findings: Events whose payload the schema refuses (left out of the projections)."""


@dataclass(frozen=True, slots=True)
class FoldedLog:
    """What one pass over the log found: the protocol audit, the projections, and Episode references."""

    audit: AuditReport
    projections: FoldedProjections
    references: dict[int, tuple[str, ...]]
    """seq -> the Object digests that Event references, for the Episodes read without pydantic."""
    seconds: float


def _audit(score_direction: str | None, direction_source: str, episode_cap: int, max_violations: int) -> AuditFold:
    return AuditFold(
        score_direction=score_direction,
        direction_source=direction_source if score_direction is not None else "unknown",
        episode_cap=episode_cap,
        limit=max_violations,
    )


def fold_log(
    rows: Sequence[LogRow],
    *,
    episode_cap: int,
    max_violations: int,
    score_direction: str | None = None,
    direction_source: str = "given by the caller",
) -> FoldedLog:
    """Audit ``rows`` (every column, by seq) and fold the projections from them in one pass."""
    start = time.perf_counter()
    audit = _audit(score_direction, direction_source, episode_cap, max_violations)
    projections, references = _fold_projections(rows, audit.parsed(rows))
    return FoldedLog(audit.finish(), projections, references, time.perf_counter() - start)


def audit_log(
    rows: Sequence[LogRow],
    *,
    episode_cap: int,
    max_violations: int,
    score_direction: str | None = None,
    direction_source: str = "given by the caller",
) -> AuditReport:
    """The protocol audit of ``rows`` alone (what :func:`fold_log` reports as its ``audit``)."""
    audit = _audit(score_direction, direction_source, episode_cap, max_violations)
    audit.run(rows)
    return audit.finish()


def fold_projections(rows: Sequence[LogRow]) -> FoldedProjections:
    """The projections of ``rows`` alone, parsing payloads here (what :func:`fold_log` reports as ``projections``)."""
    return _fold_projections(rows, None)[0]


def _as_dict(payload: bytes) -> dict[str, object] | None:
    try:
        data = _LOADS(payload)
    except orjson.JSONDecodeError:
        return None  # pydantic decides, and says why
    return data if type(data) is dict else None


def _fold_projections(
    rows: Sequence[LogRow], parsed: Iterator[dict[str, Any] | None] | None
) -> tuple[FoldedProjections, dict[int, tuple[str, ...]]]:
    """Fold the projections; ``parsed`` yields each row's payload dict (the audit's), else payloads are parsed here."""
    unfolded = UNFOLDED_KINDS
    runs, mirrors, kept = RunStateBuilder(), MirrorBuilder(), RetentionState()
    run_add, mirror_add, read = runs.add, mirrors.add, EpisodeReader().read
    findings: list[Finding] = []
    references: dict[int, tuple[str, ...]] = {}
    datas = parsed if parsed is not None else itertools.repeat(None, len(rows))
    for (seq, kind, version, visibility, payload, prev_hash, digest, recorded_at), shared in zip(
        rows, datas, strict=True
    ):
        if kind in unfolded:
            continue
        if kind == _EPISODE and version == _EPISODE_VERSION and visibility == "public":
            data = shared if parsed is not None else _as_dict(payload)
            episode = read(data) if data is not None else None
            if episode is not None:  # (retention folds no episode-finished)
                finished, digests = episode
                run_add(finished)
                mirror_add(finished, "public")
                if payload.count(b"sha256:") == len(digests) and b"\\" not in payload:
                    references[seq] = digests
                continue
        try:
            event = from_stored(StoredEvent(seq, kind, version, visibility, payload, prev_hash, digest, recorded_at))
        except LedgerError as exc:
            findings.append(Finding("schema", f"cannot fold this Event into the projections: {exc}", seq=seq))
            continue
        run_add(event)
        mirror_add(event, visibility)
        kept = retention.apply(kept, event)
    return FoldedProjections(runs.build(), mirrors.build(), kept, tuple(findings)), references
