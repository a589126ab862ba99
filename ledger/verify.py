"""Integrity check of a whole Ledger: chain, manifest, Objects -> a structured :class:`VerifyReport`.

``verify(run_dir_or_ledger)`` never raises for damage it finds (only :class:`LedgerNotFoundError`
when there is no ledger at all); every finding is a :class:`Problem` with a ``check``
(``database``, ``chain``, ``manifest``, ``object``), a ``code`` and a message saying what it means.

**Object references.** Following the schema's convention, an Object is referenced by an event
when its digest is the value of a field named ``digest``, ``digests``, ``*_digest`` or
``*_digests`` (a string or a list of strings), or a value of a ``files`` mapping
(path -> digest). Payloads are scanned with a compiled regex; when the regex cannot account for
every ``sha256:`` in a payload, that payload alone is parsed and walked exactly
(:func:`referenced_digests`). The scan applies the convention everywhere, free-form JSON included;
a digest it finds that the store cannot back is confirmed through the schema before it is reported
(``typed_object_refs``: a ``*_digest`` key inside an Episode's ``metrics``, a Benchmark's ``params``
or the recorded ``config`` is data, not a reference), so only that rare path parses payloads.
Evictions are recorded by ``bulk-evicted`` events listing ``digests``; a tombstone without such a
record is ``object_evicted_unrecorded``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evoledger.ledger.canonical import is_digest, parse_payload
from evoledger.ledger.database import DATABASE_NAME, SQLITE_ERRORS, Database
from evoledger.ledger.errors import (
    EncodingError,
    IntegrityError,
    LedgerError,
    LedgerNotFoundError,
    SchemaError,
)
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.objects import OBJECTS_DIR_NAME, ObjectStore
from evoledger.ledger.records import GENESIS_HASH
from evoledger.ledger.reference_scan import referenced_digests
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify_objects import EVICTION_KIND, check_objects
from evoledger.ledger.verify_report import Problem, ProblemList, VerifyReport

__all__ = [
    "EVENT_COLUMNS",
    "EVICTION_KIND",
    "LogRow",
    "Problem",
    "VerifyReport",
    "referenced_digests",
    "verify",
    "verify_opened",
]


LogRow = tuple[Any, ...]
"""One ``events`` row: ``(seq, kind, version, visibility, payload, prev_hash, hash, recorded_at)`` as SQLite
returns it (typed loosely: a damaged row may hold values of any type, and verify reports that)."""
EVENT_COLUMNS: Final = "seq, kind, version, visibility, payload, prev_hash, hash, recorded_at"

# Led by a literal so the regex engine can skip ahead; the key's start is checked by hand below.
_TIMESTAMP: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@dataclass
class _Walk:
    count: int = 0
    checked: int = 0
    head_hash: str = GENESIS_HASH
    hash_at_manifest: str | None = None
    references: dict[str, int] = field(default_factory=dict)
    vouched: dict[str, int] = field(default_factory=dict)
    """References the caller vouched for (``known``): exact, so never dropped by the schema's reading."""
    evicted: set[str] = field(default_factory=set)
    complete: bool = True


def verify(target: Ledger | str | os.PathLike[str], *, max_problems: int = 200) -> VerifyReport:
    """Check a Ledger's hash chain, seq contiguity, head manifest and every Object."""
    findings = ProblemList(max_problems)
    if isinstance(target, Ledger):
        with target.database.lock:  # no append interleaves with our reads
            return _verify_open(target.path, target.database, target.objects, target.manifest, findings)
    run_dir = Path(target)
    db_path = run_dir / DATABASE_NAME
    manifest = HeadManifest(run_dir / MANIFEST_NAME)
    if not db_path.is_file():
        if not manifest.exists():
            raise LedgerNotFoundError(f"no ledger in {run_dir} ({db_path} does not exist); check the path")
        findings.add(
            Problem(
                "database",
                "database_missing",
                f"{db_path} is missing although {manifest.path} exists: the database was deleted",
            )
        )
        return _report(run_dir, findings, _Walk(), 0, None)
    try:
        db = Database.open(db_path, writable=False)
    except SchemaError as exc:
        findings.add(Problem("database", "schema_unexpected", str(exc)))
        return _report(run_dir, findings, _Walk(), 0, _read_manifest(manifest, findings))
    except LedgerError as exc:
        findings.add(Problem("database", "database_unreadable", f"SQLite cannot open the ledger: {exc}"))
        return _report(run_dir, findings, _Walk(), 0, _read_manifest(manifest, findings))
    try:
        return _verify_open(run_dir, db, ObjectStore(db, run_dir / OBJECTS_DIR_NAME), manifest, findings)
    finally:
        db.close()


def verify_opened(
    run_dir: str | os.PathLike[str],
    db: Database,
    objects: ObjectStore,
    rows: Iterable[LogRow] | None = None,
    *,
    references: Mapping[int, Sequence[str]] | None = None,
    max_problems: int = 200,
) -> VerifyReport:
    """:func:`verify` of the ledger in ``run_dir`` whose database the caller already opened (read-only is fine).

    ``rows`` are its ``events`` rows, every column in :data:`EVENT_COLUMNS` order, by seq, when the
    caller has read them already (``evoledger replay`` reads the log once for all its checks);
    ``None`` reads them here. ``references`` maps a seq of those rows to the Object digests its
    payload references when the caller already knows them (they must be what
    :func:`referenced_digests` returns for that payload, up to order and repeats); the other
    payloads are scanned here.
    """
    root = Path(run_dir)
    findings = ProblemList(max_problems)
    return _verify_open(root, db, objects, HeadManifest(root / MANIFEST_NAME), findings, rows, references or {})


def _verify_open(
    run_dir: Path,
    db: Database,
    objects: ObjectStore,
    manifest: HeadManifest,
    findings: ProblemList,
    rows: Iterable[LogRow] | None = None,
    references: Mapping[int, Sequence[str]] | None = None,
) -> VerifyReport:
    _quick_check(db, findings)
    for problem in db.schema_problems:
        findings.add(
            Problem(
                "database",
                "schema_unexpected",
                f"{db.path} has {problem} beyond the ledger's schema: it was added outside evoledger (a trigger "
                "would run on the next write, so `evoledger resume` refuses this database)",
            )
        )
    recorded = _read_manifest(manifest, findings)
    walk = _Walk()
    manifest_seq = None if recorded is None else recorded.count - 1
    _walk_chain(db, rows, findings, walk, manifest_seq, references or {})
    if walk.complete:
        _check_manifest(recorded, walk, findings)
    checked = check_objects(
        db,
        objects,
        findings,
        references=walk.references,
        vouched=walk.vouched,
        evicted=walk.evicted,
        reread=lambda: rows if isinstance(rows, Sequence) else _query_rows(db),  # an iterator was consumed
    )
    return _report(run_dir, findings, walk, checked, recorded)


def _report(
    run_dir: Path, findings: ProblemList, walk: _Walk, objects_checked: int, recorded: Head | None
) -> VerifyReport:
    return VerifyReport(
        run_dir=str(run_dir),
        problems=tuple(findings.problems),
        events_checked=walk.checked,
        objects_checked=objects_checked,
        log_head=Head(walk.head_hash, walk.count) if walk.complete else None,
        manifest_head=recorded,
        problems_omitted=findings.omitted,
    )


def _quick_check(db: Database, findings: ProblemList) -> None:
    try:
        rows = db.conn.execute("PRAGMA quick_check").fetchall()
    except SQLITE_ERRORS as exc:
        findings.add(Problem("database", "database_corrupt", f"SQLite's quick_check failed: {exc}"))
        return
    if [tuple(r) for r in rows] != [("ok",)]:
        detail = "; ".join(str(r[0]) for r in rows[:5])
        findings.add(
            Problem("database", "database_corrupt", f"SQLite's quick_check found damage in {db.path}: {detail}")
        )


def _read_manifest(manifest: HeadManifest, findings: ProblemList) -> Head | None:
    try:
        recorded = manifest.read()
    except IntegrityError as exc:
        findings.add(Problem("manifest", "manifest_malformed", str(exc)))
        return None
    if recorded is None:
        findings.add(
            Problem(
                "manifest",
                "manifest_missing",
                f"the head manifest {manifest.path} is missing, so a truncated tail cannot be ruled out",
            )
        )
    return recorded


def _query_rows(db: Database) -> Iterator[LogRow]:
    """The log's rows as a cursor (queried inside the walk, which reports a database that fails to read)."""
    return db.conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq")


def _walk_chain(
    db: Database,
    rows: Iterable[LogRow] | None,
    findings: ProblemList,
    walk: _Walk,
    manifest_seq: int | None,
    known: Mapping[int, Sequence[str]],
) -> None:
    """Check seq contiguity, linkage and every hash; collect Object references and evictions.

    ``rows``: the log's rows already read, or ``None`` to query them from ``db`` here.

    The hot loop of verify: the hash is ``chain_hash`` computed with the ``kind/version/visibility``
    part encoded once per distinct triple (the tests compare it with ``StoredEvent.expected_hash``).
    """
    add = findings.add
    refs = walk.references
    sha256 = hashlib.sha256
    timestamp_ok = _TIMESTAMP.fullmatch
    middles: dict[tuple[object, object, object], bytes] = {}
    good_timestamp: object = object()  # the last well-formed one (a batch of rows shares its timestamp)
    prev = GENESIS_HASH
    expected = 0
    checked = 0
    try:
        for seq, kind, version, visibility, payload, prev_hash, digest, recorded_at in (
            _query_rows(db) if rows is None else rows
        ):
            checked += 1
            if (
                type(seq) is not int
                or type(kind) is not str
                or type(version) is not int
                or type(visibility) is not str
                or type(payload) is not bytes
                or type(prev_hash) is not str
                or type(digest) is not str
            ):
                add(
                    Problem(
                        "chain",
                        "row_malformed",
                        f"event row {seq!r} has values of the wrong type; the database file is damaged",
                        seq=seq if type(seq) is int else None,
                    )
                )
                if type(seq) is int:
                    expected = seq + 1
                prev = digest if type(digest) is str else prev
                continue
            if seq != expected:
                what = (
                    f"events {expected}..{seq - 1} are missing (deleted)"
                    if seq > expected
                    else f"seq {seq} comes after {expected - 1} (duplicated or reordered)"
                )
                add(Problem("chain", "seq_gap", f"seq is not contiguous: {what}", seq=seq))
            if prev_hash != prev:
                add(
                    Problem(
                        "chain",
                        "broken_link",
                        f"event {seq}'s prev_hash {prev_hash} is not the previous event's hash {prev}; "
                        "an event before it was deleted, inserted or reordered",
                        seq=seq,
                    )
                )
            triple = (kind, version, visibility)
            middle = middles.get(triple)
            try:
                if middle is None:
                    middle = b"\x00%s\x00%d\x00%s\x00" % (kind.encode("utf-8"), version, visibility.encode("ascii"))
                    if len(middles) < 4096:
                        middles[triple] = middle
                hasher = sha256(prev_hash.encode("ascii") + middle)
                hasher.update(payload)
                recomputed = "sha256:" + hasher.hexdigest()
            except UnicodeError:  # a damaged visibility or hash column
                recomputed = ""
            if recomputed != digest:
                add(
                    Problem(
                        "chain",
                        "hash_mismatch",
                        f"event {seq} ({kind!r}) does not hash to its recorded hash; its kind, version, "
                        "visibility or payload bytes were altered",
                        seq=seq,
                    )
                )
            if recorded_at == good_timestamp:
                pass
            elif type(recorded_at) is str and timestamp_ok(recorded_at):
                good_timestamp = recorded_at
            else:
                add(
                    Problem(
                        "chain",
                        "timestamp_malformed",
                        f"event {seq}'s recorded_at {recorded_at!r:.40} is not an ISO-8601 UTC timestamp; "
                        "the row was damaged (timestamps are not hashed, so only their form is checked)",
                        seq=seq,
                    )
                )
            try:  # bounded: a payload no writer produces (deep, huge, not UTF-8, a 5,000-digit integer)
                parse_payload(payload)
            except EncodingError as exc:
                add(Problem("chain", "payload_malformed", f"event {seq} ({kind!r:.80}): {exc}", seq=seq))
            if b"sha256:" in payload:
                found = known.get(seq)
                for ref in referenced_digests(payload) if found is None else found:
                    if ref not in refs:
                        refs[ref] = seq
                if found is not None:
                    for ref in found:
                        walk.vouched.setdefault(ref, seq)
                if kind == EVICTION_KIND:
                    _note_evictions(payload, walk.evicted)
            if seq == manifest_seq:
                walk.hash_at_manifest = digest
            prev = digest
            expected = seq + 1
    except SQLITE_ERRORS as exc:
        walk.complete = False
        add(
            Problem(
                "database",
                "events_unreadable",
                f"SQLite failed while reading the events after {checked} rows: {exc}; the database file is damaged",
            )
        )
    walk.checked = checked
    walk.count = expected
    walk.head_hash = prev


def _note_evictions(payload: bytes, evicted: set[str]) -> None:
    try:
        listed = parse_payload(payload).get("digests")
    except (EncodingError, AttributeError):
        return
    if isinstance(listed, list):
        evicted.update(d for d in listed if is_digest(d))


def _check_manifest(recorded: Head | None, walk: _Walk, findings: ProblemList) -> None:
    if recorded is None:
        return
    if recorded.count > walk.count:
        findings.add(
            Problem(
                "manifest",
                "truncated_tail",
                f"the head manifest records {recorded.count} events but the log has "
                f"{walk.count}: the last {recorded.count - walk.count} event(s) were deleted",
                seq=walk.count,
            )
        )
    elif recorded.count == walk.count:
        if recorded.hash != walk.head_hash:
            findings.add(
                Problem(
                    "manifest",
                    "manifest_mismatch",
                    f"the head manifest records head {recorded.hash} but the log's last event "
                    f"hashes to {walk.head_hash}: the tail of the log was replaced",
                    seq=walk.count - 1,
                )
            )
    elif recorded.count > 0 and walk.hash_at_manifest != recorded.hash:
        findings.add(
            Problem(
                "manifest",
                "manifest_mismatch",
                f"the head manifest ({recorded.count} events, {recorded.hash}) is not a prefix "
                "of the log: the log was rewritten",
                seq=recorded.count - 1,
            )
        )
    else:
        findings.add(
            Problem(
                "manifest",
                "manifest_behind",
                f"the head manifest records {recorded.count} of {walk.count} events (a crash "
                "between a commit and the manifest rewrite); a writable open repairs it",
                severity="warning",
            )
        )
