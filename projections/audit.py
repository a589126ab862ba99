"""The protocol audit: a pure fold over a Run's stored Events that re-derives its rules and lists violations.

:func:`fold` reads rows ``(seq, kind, version, visibility, payload)`` -- the log's own columns, so a
damaged payload is a finding rather than a crash -- and parses payloads with orjson into plain
dicts (no pydantic: this fold runs over every Event of a Run and must stay close to the speed of
reading the rows). It does no I/O; its result depends only on the rows and its arguments. The rules
live in ``projections.audit_protocol`` (up to finish, with the vocabulary every part shares) and
``projections.audit_judging`` (after).

Rules are re-derived from the log: budget, ``max_submissions`` and ``finish_budget_policy`` from
``run-created`` and the rest (pool size, Episodes per Submission, Validation and Assessment sizes,
Candidate limit, fallback) from the configuration it records; ``episode_cap`` (the kernel's
per-Submission protocol cap) is not in the log and comes from the caller. The Benchmark's score
direction comes from ``run-created``'s ``benchmark_spec`` when the record has one, else from the
``candidate-selected`` tie-break text when that names one, else from the caller's
``score_direction``; :attr:`AuditReport.direction_source` says which, and a log that contradicts a
known direction is a violation.

**No host fact reaches the Agent.** Every Event of a ``host`` kind must be stored ``host``; a
``public`` payload may carry neither a key containing ``seed`` nor the decimal form of any seed that
``run-created`` or ``episode-planned`` records. Seeds of fewer than :data:`MIN_SEED_DIGITS` digits are
not searched for: they would match ordinary numbers by chance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from evoledger.ledger.canonical import parse_canonical
from evoledger.ledger.errors import EncodingError, SchemaError
from evoledger.ledger.events import EVENT_TYPES, UPCASTERS, EventBase, current_version, to_pending
from evoledger.ledger.records import StoredEvent, Visibility
from evoledger.projections.audit_judging import JudgingRules, SelectionScore
from evoledger.projections.audit_protocol import PlannedSeed, ProtocolRules, RunRules, Violation, rules_of
from evoledger.projections.audit_scores import RecomputedScores, ScoreAudit
from evoledger.projections.scoring import rank_key

__all__ = [
    "DEFAULT_EPISODE_CAP",
    "MIN_SEED_DIGITS",
    "AuditFold",
    "AuditReport",
    "AuditRow",
    "PlannedSeed",
    "RecomputedScores",
    "RunRules",
    "SelectionScore",
    "Violation",
    "fold",
    "rank_key",
    "rows_from_events",
    "rows_from_records",
    "rules_of",
]

AuditRow = tuple[int, str, int, str, bytes]
"""One log row as the audit reads it: ``(seq, kind, version, visibility, payload)``."""

MIN_SEED_DIGITS: Final = 5
"""Seeds with fewer decimal digits are not searched for in public payloads (they match by chance)."""

DEFAULT_EPISODE_CAP: Final = 10_000
"""The per-Submission Episode cap when the caller does not pass the kernel's (they are equal today)."""

_DECLARED: Final[dict[str, str]] = {kind: cls.visibility for kind, cls in EVENT_TYPES.items()}
_CURRENT: Final[dict[str, int]] = {kind: current_version(kind) for kind in EVENT_TYPES}
_ONLY_DIGITS: Final = bytes(c if 0x30 <= c <= 0x39 else 0x20 for c in range(256))
_MALFORMED: Final = (KeyError, TypeError, ValueError, AttributeError, IndexError)
_LOADS: Final = orjson.loads


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What :func:`fold` found, with the figures it re-derived. ``ok`` when no rule is broken."""

    events: int
    violations: tuple[Violation, ...]
    violations_omitted: int
    notes: tuple[str, ...]
    rules: RunRules | None
    planned: tuple[PlannedSeed, ...]
    """Every ``episode-planned`` Event of the Run, in log order."""
    score_direction: str | None
    direction_source: str
    direction_needed: bool
    """A rule could not be checked without the score direction (pass ``score_direction`` and fold again)."""
    budget_used: int
    budget_left: int
    submissions: int
    finished: bool
    selected: str | None
    ended: str | None
    scores: RecomputedScores | None = None
    """The aggregates recomputed from the Episodes (``projections.audit_scores``); ``None``: no rule declared."""

    @property
    def ok(self) -> bool:
        return not self.violations and self.violations_omitted == 0

    @property
    def first(self) -> Violation | None:
        """The violation with the lowest seq (the earliest Event that breaks a rule)."""
        return min(self.violations, key=lambda v: -1 if v.seq is None else v.seq, default=None)


def rows_from_records(records: Iterable[StoredEvent]) -> list[AuditRow]:
    """Audit rows of stored Events (e.g. ``Ledger.records()``)."""
    return [(r.seq, r.kind, r.version, r.visibility, r.payload) for r in records]


def rows_from_events(events: Iterable[EventBase | tuple[Visibility, EventBase]]) -> list[AuditRow]:
    """Audit rows of Event models numbered from 0; a ``(visibility, event)`` pair overrides the stored visibility."""
    rows: list[AuditRow] = []
    for seq, item in enumerate(events):
        visibility, event = item if isinstance(item, tuple) else (None, item)
        pending = to_pending(event)
        rows.append((seq, pending.kind, pending.version, visibility or pending.visibility, pending.payload))
    return rows


class AuditFold:
    """One audit, fed row by row: the two rule accumulators, the visibility and seed scans, the violations.

    :func:`fold` is ``AuditFold(...)``, :meth:`run` over the rows, then :meth:`finish`. ``evoledger
    replay`` iterates :meth:`parsed` itself to share the parsed payloads with its other checks.
    """

    def __init__(
        self,
        *,
        score_direction: str | None = None,
        direction_source: str = "unknown",
        episode_cap: int = DEFAULT_EPISODE_CAP,
        limit: int = 200,
    ) -> None:
        self.violations: list[Violation] = []
        self.omitted = 0
        self.limit = limit
        self.protocol = ProtocolRules(add=self.add, episode_cap=episode_cap)
        self.judging = JudgingRules(self.protocol, score_direction, direction_source)
        self.public: list[bytes] = []
        self.public_seqs: list[int] = []
        self.run_seed: int | None = None
        self.events = 0
        self.next_seq = 0
        p, j = self.protocol, self.judging
        self.handlers: dict[str, Callable[[int, dict[str, Any]], None]] = {
            "run-created": self._run_created,
            "episode-planned": p.episode_planned,
            "program-snapshotted": p.program_snapshotted,
            "agent-started": p.agent_started,
            "submission-accepted": p.submission_accepted,
            "episode-started": p.episode_started,
            "episode-finished": p.episode_finished,
            "infra-fault": p.infra_fault,
            "feedback-published": p.feedback_published,
            "bulk-evicted": p.bulk_evicted,
            "finish-accepted": p.finish_accepted,
            "validation-episode-finished": j.validation_episode_finished,
            "candidate-selected": j.candidate_selected,
            "assessment-finished": j.assessment_finished,
            "run-ended": j.run_ended,
        }
        self.scores = ScoreAudit(p, j)
        self.handlers = self.scores.chain(self.handlers)

    def add(self, violation: Violation) -> None:
        if len(self.violations) < self.limit:
            self.violations.append(violation)
        else:
            self.omitted += 1

    def _run_created(self, seq: int, d: dict[str, Any]) -> None:
        self.protocol.run_created(seq, d)
        if type(d.get("seed")) is int:
            self.run_seed = d["seed"]
        spec = d.get("benchmark_spec")
        recorded = spec.get("score_direction") if isinstance(spec, dict) else None
        if recorded in ("maximize", "minimize"):
            self.judging.record_direction(seq, recorded, "run-created's benchmark_spec")

    def parsed(self, rows: Iterable[Sequence[Any]]) -> Iterator[dict[str, Any] | None]:
        """Fold ``rows`` (in log order; each starts with the five :data:`AuditRow` columns), yielding per row
        its payload as the protocol read it (``None``: unreadable).

        The common row (in order, known kind, declared visibility, current version) is parsed with
        orjson; anything unusual goes through :meth:`_unusual`, which reports it (and upcasts an older
        version). The yielded dicts are shared with the caller, who must not change them.
        """
        declared_of, current_of, loads = _DECLARED.get, _CURRENT.get, _LOADS
        handlers, public, public_seqs, judging = self.handlers, self.public, self.public_seqs, self.judging
        expected, count = self.next_seq, 0
        try:
            for row in rows:
                seq, kind, version, visibility, payload = row[0], row[1], row[2], row[3], row[4]
                count += 1
                if seq != expected or declared_of(kind) != visibility or current_of(kind) != version or judging.ended:
                    data = self._unusual(seq, kind, version, visibility, payload, expected)
                else:
                    try:
                        data = loads(payload)
                    except orjson.JSONDecodeError:
                        data = self._parse(seq, kind, version, payload)
                    if type(data) is not dict:
                        data = self._parse(seq, kind, version, payload)
                expected = seq + 1
                if data is not None:
                    if visibility != "host":
                        public.append(payload)
                        public_seqs.append(seq)
                    handler = handlers.get(kind)
                    if handler is not None:
                        try:
                            handler(seq, data)
                        except _MALFORMED as exc:
                            self.add(
                                Violation(
                                    "malformed_event",
                                    f"{kind} lacks a field the protocol needs or holds a value "
                                    f"of the wrong type ({type(exc).__name__}: {exc})",
                                    seq,
                                )
                            )
                yield data
        finally:
            self.events += count
            self.next_seq = expected

    def run(self, rows: Iterable[AuditRow]) -> None:
        """Fold ``rows`` (see :meth:`parsed`)."""
        for _ in self.parsed(rows):
            pass

    def _unusual(
        self, seq: int, kind: str, version: int, visibility: str, payload: bytes, expected: int
    ) -> dict[str, Any] | None:
        """Report what is unusual about a row; its payload dict when the protocol can still read it."""
        if seq != expected:
            self.add(
                Violation(
                    "seq_order",
                    f"event {seq} follows event {expected - 1}: rows are missing, duplicated or reordered",
                    seq,
                )
            )
        if self.judging.ended is not None:
            self.add(
                Violation("after_end", f"{kind} is recorded after run-ended: nothing happens once a Run ends", seq)
            )
        declared = _DECLARED.get(kind)
        if declared is None:
            self.add(Violation("unknown_kind", f"unknown event kind {kind!r}; known: {sorted(_DECLARED)}", seq))
            return None
        if visibility != declared:
            rule = "host_fact_public" if declared == "host" else "visibility_mismatch"
            self.add(
                Violation(
                    rule,
                    f"{kind} is declared {declared} but stored {visibility}"
                    + (": a host fact was published to the Agent" if declared == "host" else ""),
                    seq,
                )
            )
        return self._parse(seq, kind, version, payload)

    def _parse(self, seq: int, kind: str, version: int, payload: bytes) -> dict[str, Any] | None:
        try:
            data = _loads(payload)
        except EncodingError as exc:
            self.add(Violation("payload_unreadable", f"the {kind} payload is not JSON: {exc}", seq))
            return None
        if not isinstance(data, dict):
            self.add(Violation("payload_unreadable", f"the {kind} payload is a JSON {type(data).__name__}", seq))
            return None
        current = _CURRENT[kind]
        if version != current:
            try:
                return UPCASTERS.upcast(kind, data, from_version=version, to_version=current)
            except SchemaError as exc:
                self.add(Violation("schema", f"{kind} v{version} cannot be read: {exc}", seq))
                return None
        return data

    def _scan_public(self, seeds: list[int]) -> None:
        """Seed-like keys and seed values in public payloads, scanned at C speed over all of them at once."""
        joined = b"\n".join(self.public)
        if b"seed" in joined.lower():
            for seq, payload in zip(self.public_seqs, self.public, strict=True):
                if b"seed" in payload.lower():
                    keys = _seed_keys(_loads(payload), "")
                    if keys:
                        self.add(
                            Violation(
                                "seed_field_public",
                                f"public event {seq} carries seed-like field(s) "
                                f"{keys}: Host seeds must never reach the Agent",
                                seq,
                            )
                        )
        secret = {str(s).encode() for s in seeds if type(s) is int and s >= 10 ** (MIN_SEED_DIGITS - 1)}
        leaked = secret.intersection(joined.translate(_ONLY_DIGITS).split())
        for seq, payload in zip(self.public_seqs, self.public, strict=True) if leaked else ():
            for number in sorted(leaked.intersection(payload.translate(_ONLY_DIGITS).split())):
                self.add(
                    Violation(
                        "seed_value_public",
                        f"public event {seq} contains the Host seed {number.decode()}: a host fact reached the Agent",
                        seq,
                    )
                )

    def finish(self) -> AuditReport:
        """The report over every row fed so far (call once, after the last row)."""
        if self.events == 0:
            self.add(Violation("run_created_missing", "the log is empty: there is no Run to audit", None))
        elif self.protocol.rules is None:
            self.add(
                Violation(
                    "run_created_missing",
                    "the log has no run-created Event: this is not a Run record "
                    "(audit an evaluation record with `evoledger ledger verify`)",
                    0,
                )
            )
        return self._report()

    def _report(self) -> AuditReport:
        p, j = self.protocol, self.judging
        p.finish()
        seeds = [s for planned in p.planned.values() for s in (planned.env_seed, planned.policy_seed)]
        self._scan_public([*seeds, self.run_seed] if self.run_seed is not None else seeds)
        notes = list(j.notes)
        if self.events and j.ended is None:
            notes.append("the Run has not ended (still running, or its Host died: `evoledger resume` continues it)")
        return AuditReport(
            events=self.events,
            violations=tuple(self.violations),
            violations_omitted=self.omitted,
            notes=tuple(notes),
            rules=p.rules,
            planned=tuple(p.planned.values()),
            score_direction=j.score_direction,
            direction_source=j.direction_source,
            direction_needed=j.direction_needed,
            budget_used=p.charged - p.refunded,
            budget_left=p.remaining,
            submissions=len(p.submissions),
            finished=p.finished,
            selected=j.selected,
            ended=j.ended,
            scores=self.scores.recomputed(),
        )


def _loads(payload: bytes) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:  # e.g. an integer beyond 64 bits: the canonical parser reads it
        return parse_canonical(payload)


def _seed_keys(value: Any, where: str) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if "seed" in str(key).lower():
                found.append(path)
            found.extend(_seed_keys(item, path))
    elif isinstance(value, list):
        for item in value:
            found.extend(_seed_keys(item, where + "[]"))
    return found


def fold(
    rows: Iterable[AuditRow],
    *,
    score_direction: str | None = None,
    direction_source: str = "given by the caller",
    episode_cap: int = DEFAULT_EPISODE_CAP,
    max_violations: int = 200,
) -> AuditReport:
    """Audit a Run's rows (in log order) against its protocol; see the module docstring.

    >>> fold(rows_from_events(events), score_direction="maximize").ok  # doctest: +SKIP
    """
    audit = AuditFold(
        score_direction=score_direction,
        direction_source=direction_source if score_direction is not None else "unknown",
        episode_cap=episode_cap,
        limit=max_violations,
    )
    audit.run(rows)
    return audit.finish()
