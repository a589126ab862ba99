"""Ledger storage benchmark: appends, read + verify, Object put/get, against raw sqlite3.

Run: ``python bench/ledger_bench.py [--events N]``. Everything is measured in this one process
and this one run; the baseline inserts the very same rows with plain ``sqlite3`` (same schema,
WAL, synchronous=NORMAL), so the ratios are meaningful even on a noisy machine.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.log import check_batch
from evoledger.ledger.records import PendingEvent, StoredEvent
from evoledger.ledger.signing import HeadSigner
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from rich.console import Console
from rich.table import Table

_SCHEMA = (
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, version INTEGER NOT NULL, "
    "visibility TEXT NOT NULL, payload BLOB NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL, "
    "recorded_at TEXT NOT NULL) STRICT"
)


_DISTINCT_OBJECTS = 1000


def object_bytes(i: int) -> bytes:
    return canonical_json({"trajectory": i, "rewards": [1.0] * 50})


def object_digest(i: int) -> str:
    return "sha256:" + hashlib.sha256(object_bytes(i)).hexdigest()


def _fixed_clock() -> datetime:
    return datetime(2024, 1, 1, tzinfo=UTC)


def make_events(n: int, seed: int = 0) -> list[PendingEvent]:
    """~300-byte canonical payloads shaped like episode-finished events.

    They are made by ``PendingEvent.encode`` (canonical by construction), as every Event the Host
    appends is (``to_pending``); :func:`as_plain_bytes` gives the same events as plain ``PendingEvent``
    values, whose payloads the log re-checks in full.
    """
    rng = random.Random(seed)
    events = []
    for i in range(n):
        value = {
            "episode": i % 997,
            "failure": None,
            "return": round(rng.uniform(0, 500), 6),
            "steps": rng.randrange(1, 501),
            "submission": f"submission-{i // 100:06d}",
            "trajectory_digest": object_digest(i % _DISTINCT_OBJECTS),
            "note": "x" * rng.randrange(40, 80),
        }
        events.append(PendingEvent.encode("episode-finished", 1, "public", value))
    return events


def as_plain_bytes(events: list[PendingEvent]) -> list[PendingEvent]:
    return [PendingEvent(e.kind, e.version, e.visibility, e.payload) for e in events]


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def raw_baseline(rows: list[StoredEvent], path: Path, batch: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(_SCHEMA)
    tuples = [(e.seq, e.kind, e.version, e.visibility, e.payload, e.prev_hash, e.hash, e.recorded_at) for e in rows]

    def run() -> None:
        for start in range(0, len(tuples), batch):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tuples[start : start + batch])
            conn.execute("COMMIT")

    seconds = _timed(run)
    conn.close()
    return len(tuples) / seconds


def ledger_append(
    events: list[PendingEvent], run_dir: Path, batch: int, signer: HeadSigner | None = None
) -> tuple[float, Ledger]:
    ledger = Ledger.create(run_dir, clock=_fixed_clock)
    if signer is not None:
        ledger.sign_heads(signer)
    ledger.objects.put_many(object_bytes(i) for i in range(_DISTINCT_OBJECTS))

    def run() -> None:
        for start in range(0, len(events), batch):
            ledger.append_records(events[start : start + batch], expected_head=ledger.head().hash)

    return len(events) / _timed(run), ledger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="events for the batched runs")
    parser.add_argument("--single", type=int, default=3_000, help="events for the one-per-transaction runs")
    parser.add_argument("--batch", type=int, default=1000, help="events per batched append")
    args = parser.parse_args()
    console = Console()
    events = make_events(args.events)
    size = sum(len(e.payload) for e in events) / len(events)
    table = Table(title=f"evoledger ledger benchmark ({args.events} events, mean payload {size:.0f} B)")
    for column in ("measure", "ledger", "raw sqlite3", "ratio", "target"):
        table.add_column(column, justify="right" if column != "measure" else "left")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain = as_plain_bytes(events)
        batches = [plain[i : i + args.batch] for i in range(0, len(plain), args.batch)]
        check_rate = len(events) / _timed(lambda: [check_batch(b) for b in batches])
        batched, ledger = ledger_append(events, root / "batched", args.batch)
        stored = list(ledger.records())
        raw_batched = raw_baseline(stored, root / "raw-batched.sqlite", args.batch)
        table.add_row(
            f"append, {args.batch}/transaction (events/s)",
            f"{batched:,.0f}",
            f"{raw_batched:,.0f}",
            f"{batched / raw_batched:.0%}",
            ">= 50%",
        )
        rechecked, rechecked_ledger = ledger_append(plain, root / "rechecked", args.batch)
        rechecked_ledger.close()
        table.add_row(
            "  same, plain-bytes payloads re-checked in full (events/s)",
            f"{rechecked:,.0f}",
            f"{raw_batched:,.0f}",
            f"{rechecked / raw_batched:.0%}",
            "",
        )
        table.add_row("  of which: the full canonical re-check alone (events/s)", f"{check_rate:,.0f}", "", "", "")

        single_events = events[: args.single]
        single, single_ledger = ledger_append(single_events, root / "single", 1)
        single_ledger.close()
        raw_single = raw_baseline(stored[: args.single], root / "raw-single.sqlite", 1)
        table.add_row(
            "append, 1/transaction + manifest fsync (events/s)",
            f"{single:,.0f}",
            f"{raw_single:,.0f}",
            f"{single / raw_single:.0%}",
            "",
        )
        signer = HeadSigner(SigningKey.from_seed(bytes(32)), "bench")
        signed, signed_ledger = ledger_append(single_events, root / "signed", 1, signer)
        signed_ledger.close()
        table.add_row(
            "  same, every head signed into ledger.sig (events/s)",
            f"{signed:,.0f}",
            f"{raw_single:,.0f}",
            f"{signed / raw_single:.0%}",
            f"{signed / single:.0%} of unsigned",
        )

        read_rate = len(stored) / _timed(lambda: sum(1 for _ in ledger.records()))
        table.add_row("read (events/s)", f"{read_rate:,.0f}", "", "", "")
        ledger.close()
        report = None

        def run_verify() -> None:
            nonlocal report
            report = verify(root / "batched")

        verify_rate = len(stored) / _timed(run_verify)
        if report is None or not report.ok:
            raise SystemExit(f"verify failed: {report and report.first_problem}")
        label = f"read + verify, whole run dir incl. {report.objects_checked} Objects (events/s)"
        table.add_row(label, f"{verify_rate:,.0f}", "", "", ">= 200k")

        for label, blob_size, count in (("64 KiB", 64 << 10, 400), ("4 MiB file", 4 << 20, 12)):
            rng = random.Random(1)
            # half random, half repetitive: realistic compressibility (trajectories are JSON)
            blobs = [rng.randbytes(blob_size // 2) + bytes(blob_size // 2) for _ in range(count)]
            with Ledger.create(root / f"objects-{blob_size}") as store:
                megabytes = blob_size * count / 1e6
                digests: list[str] = []
                put = megabytes / _timed(lambda: digests.extend(store.objects.put_many(blobs)))  # noqa: B023
                get = megabytes / _timed(lambda: [store.objects.get(d) for d in digests])  # noqa: B023
            table.add_row(f"Object put / get, {label} (MB/s)", f"{put:,.0f} / {get:,.0f}", "", "", "")
    console.print(table)


if __name__ == "__main__":
    main()
