"""verify()'s Object half: every stored Object readable and matching, every reference backed.

An Object row must decode to bytes that hash to its digest (a file-located one must have its file);
a tombstone must be recorded by a ``bulk-evicted`` event; and every digest the events reference must
have an Object or an eviction record. References come from ``ledger.verify``'s payload scan, which
applies the naming convention everywhere; a candidate the store cannot back is confirmed through the
schema (:func:`~evoledger.ledger.events.references.typed_object_refs`) before it is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any, Final

from evoledger.ledger.canonical import is_digest
from evoledger.ledger.database import SQLITE_ERRORS, Database
from evoledger.ledger.errors import LedgerError, ObjectEvictedError, ObjectMissingError, ObjectOversizeError
from evoledger.ledger.objects import ObjectStore
from evoledger.ledger.reference_scan import digests_in, referenced_digests
from evoledger.ledger.verify_report import Problem, ProblemList

__all__ = ["EVICTION_KIND", "check_objects"]

EVICTION_KIND: Final = "bulk-evicted"


def check_objects(
    db: Database,
    objects: ObjectStore,
    findings: ProblemList,
    *,
    references: Mapping[str, int],
    vouched: Mapping[str, int],
    evicted: Set[str],
    reread: Callable[[], Iterable[Sequence[Any]]],
) -> int:
    """Check every stored Object and every reference; returns how many Object rows were checked.

    ``references``: digest -> first seq of the payload scan's candidates; ``vouched``: those the
    caller knows are exact references; ``evicted``: digests ``bulk-evicted`` records; ``reread``:
    the log's rows again (every column, by seq), read only when a candidate has no Object.
    """
    add = findings.add
    seen: set[str] = set()
    checked = 0
    try:
        listed = db.conn.execute("SELECT digest, size, location FROM objects").fetchall()
    except SQLITE_ERRORS as exc:
        add(Problem("database", "objects_unreadable", f"SQLite failed while listing Objects: {exc}"))
        return 0
    for digest, _size, location in listed:
        checked += 1
        if not is_digest(digest) or location not in ("inline", "file", "evicted"):
            add(
                Problem(
                    "object",
                    "object_corrupt",
                    f"an objects row is damaged (digest {digest!r:.80}, location {location!r:.20})",
                )
            )
            continue
        seen.add(digest)
        if location == "evicted":
            if digest not in evicted:
                add(
                    Problem(
                        "object",
                        "object_evicted_unrecorded",
                        f"Object {digest} was evicted but no {EVICTION_KIND!r} event records it: its "
                        "bytes were deleted outside bulk retention",
                        digest=digest,
                    )
                )
            continue
        try:
            objects.check(digest)  # streamed: one chunk in memory, capped at the recorded size
        except ObjectOversizeError as exc:
            add(Problem("object", "object_oversize", str(exc), digest=digest, seq=references.get(digest)))
        except ObjectMissingError as exc:
            add(Problem("object", "object_missing", str(exc), digest=digest, seq=references.get(digest)))
        except ObjectEvictedError:  # evicted between our listing and the read
            continue
        except LedgerError as exc:
            add(Problem("object", "object_corrupt", str(exc), digest=digest, seq=references.get(digest)))
    unbacked = {d: seq for d, seq in references.items() if d not in seen and d not in evicted}
    if unbacked:
        confirmed = _typed_references(unbacked, reread, findings)
        for digest in unbacked.keys() & vouched.keys():
            confirmed[digest] = min(vouched[digest], confirmed.get(digest, vouched[digest]))
        unbacked = dict(sorted(confirmed.items(), key=lambda item: item[1]))
    for digest, seq in unbacked.items():
        add(
            Problem(
                "object",
                "object_missing",
                f"event {seq} references Object {digest}, which has no bytes and no eviction record",
                digest=digest,
                seq=seq,
            )
        )
    return checked


def _typed_references(
    candidates: dict[str, int], reread: Callable[[], Iterable[Sequence[Any]]], findings: ProblemList
) -> dict[str, int]:
    """Of the digests the payload scan took for references and the store cannot back, those the schema
    confirms, each with the first event that references it.

    The scan applies the naming convention everywhere, free-form JSON included; a digest under a
    ``*_digest`` key of an Episode's ``metrics`` or a Benchmark's ``params`` is data, not a reference
    (:func:`~evoledger.ledger.events.references.typed_object_refs`). Only this rare path (something
    is missing) pays for parsing the payloads that mention such a digest.
    """
    from evoledger.ledger.events.references import typed_object_refs  # the schema, only when needed

    confirmed: dict[str, int] = {}
    try:
        for row in reread():
            seq, kind, payload = row[0], row[1], row[4]
            if type(payload) is not bytes or b"sha256:" not in payload:
                continue
            named = candidates.keys() & digests_in(payload)
            if not named:
                continue
            try:
                refs = typed_object_refs(kind, json.loads(payload)) if type(kind) is str else frozenset(named)
            except (ValueError, RecursionError):  # also an integer past sys.get_int_max_str_digits()
                refs = frozenset(referenced_digests(payload))  # not JSON: the scan's reading stands
            for digest in named.intersection(refs):
                confirmed.setdefault(digest, seq)
    except SQLITE_ERRORS as exc:
        findings.add(Problem("database", "events_unreadable", f"SQLite failed while re-reading the events: {exc}"))
        return candidates
    return confirmed
