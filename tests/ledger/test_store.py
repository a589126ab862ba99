"""The Ledger facade: create/open, single-writer lock, manifest checks, transactions, typed helpers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import (
    ConcurrencyError,
    InputError,
    IntegrityError,
    LedgerError,
    LedgerExistsError,
    LedgerLockedError,
    LedgerNotFoundError,
    SchemaError,
)
from evoledger.ledger.head import EMPTY_HEAD, Head
from evoledger.ledger.locking import WriterLock
from evoledger.ledger.records import GENESIS_HASH, PendingEvent
from evoledger.ledger.store import CURRENT_HEAD, Ledger, RecordedEvent


def ev(i: int = 0, kind: str = "note", visibility: str = "public") -> PendingEvent:
    return PendingEvent(kind, 1, visibility, canonical_json({"i": i}))  # type: ignore[arg-type]


def _clock() -> datetime:
    return datetime(2024, 1, 1, tzinfo=UTC)


def _sql(run_dir: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    conn.execute(statement, params)
    conn.close()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "r1"


# -- create / open -----------------------------------------------------------------------------------
def test_create_makes_the_run_directory_and_an_empty_ledger(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        assert ledger.path == run_dir
        assert ledger.writable
        assert ledger.head() == EMPTY_HEAD
        assert ledger.manifest.read() == EMPTY_HEAD
    assert {p.name for p in run_dir.iterdir()} >= {"ledger.sqlite", "ledger.head", "ledger.lock"}


def test_create_refuses_an_existing_ledger(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    with pytest.raises(LedgerExistsError, match="already holds a record") as info:
        Ledger.create(run_dir)
    assert str(run_dir) in str(info.value)
    assert "choose a new directory" in str(info.value)  # in the CLI's words: no Python API in the message


def test_create_refuses_a_file_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="it is a file"):
        Ledger.create(tmp_path / "file")


def test_create_ignores_a_stale_wal_file(run_dir: Path) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "ledger.sqlite-wal").write_bytes(b"junk from an old run")
    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev()])
    with Ledger.open(run_dir) as ledger:
        assert ledger.head().count == 1


def test_open_missing_ledger_names_the_path_and_a_hint(tmp_path: Path) -> None:
    with pytest.raises(LedgerNotFoundError, match="no ledger in") as info:
        Ledger.open(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(info.value)
    assert "Ledger.create" in str(info.value)


def test_open_with_manifest_but_no_database_is_integrity_error(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    (run_dir / "ledger.sqlite").unlink()
    with pytest.raises(IntegrityError, match="ledger database was deleted"):
        Ledger.open(run_dir)


def test_open_a_file_that_is_not_sqlite(run_dir: Path) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(IntegrityError, match="damaged or not an evoledger ledger"):
        Ledger.open(run_dir)
    with pytest.raises(IntegrityError):
        Ledger.open(run_dir, writable=True)
    lock = WriterLock(run_dir / "ledger.lock")  # the failed writable open released its lock
    lock.acquire()
    lock.release()


def test_open_a_database_of_another_format(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    _sql(run_dir, "UPDATE meta SET value = 'evoledger.ledger/99' WHERE key = 'format'")
    with pytest.raises(SchemaError, match=r"evoledger\.ledger/99"):
        Ledger.open(run_dir)


def test_read_only_ledger_refuses_appends(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    with Ledger.open(run_dir) as ledger:
        assert not ledger.writable
        with pytest.raises(InputError, match="opened read-only; open it with writable=True"):
            ledger.append_records([ev()])
        with pytest.raises(InputError, match="read-only"), ledger.transaction():
            pass


def test_closed_ledger_refuses_appends(run_dir: Path) -> None:
    ledger = Ledger.create(run_dir)
    ledger.close()
    ledger.close()  # idempotent
    with pytest.raises(InputError, match="is closed"):
        ledger.append_records([ev()])


# -- single writer -------------------------------------------------------------------------------------
def test_second_writer_in_the_same_process_is_refused(run_dir: Path) -> None:
    with Ledger.create(run_dir):
        with pytest.raises(LedgerLockedError, match="locked for writing") as info:
            Ledger.open(run_dir, writable=True)
        assert str(run_dir / "ledger.lock") in str(info.value)
        with Ledger.open(run_dir) as reader:  # readers never take the lock
            assert reader.head() == EMPTY_HEAD
    with Ledger.open(run_dir, writable=True):  # released on close
        pass


_SECOND_WRITER = """
import sys
from evoledger.ledger.errors import LedgerLockedError
from evoledger.ledger.store import Ledger
try:
    Ledger.open(sys.argv[1], writable=True)
except LedgerLockedError as exc:
    print("LOCKED", exc)
    sys.exit(3)
with Ledger.open(sys.argv[1]) as reader:
    print("OPENED", reader.head().count)
"""


def test_second_writer_process_gets_ledger_locked_error_with_pid(run_dir: Path) -> None:
    import os

    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev()])
        child = subprocess.run(
            [sys.executable, "-c", _SECOND_WRITER, str(run_dir)], capture_output=True, text=True, timeout=60
        )
        assert child.returncode == 3, child.stderr
        assert child.stdout.startswith("LOCKED")
        assert f"process {os.getpid()}" in child.stdout
        assert str(run_dir / "ledger.lock") in child.stdout
    child = subprocess.run(
        [sys.executable, "-c", _SECOND_WRITER, str(run_dir)], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "OPENED 1"


def test_lock_of_a_dead_writer_is_released(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    code = (
        f"from evoledger.ledger.store import Ledger; import os; Ledger.open({str(run_dir)!r}, writable=True); "
        "os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    with Ledger.open(run_dir, writable=True) as ledger:
        assert ledger.head() == EMPTY_HEAD


# -- head manifest on open -------------------------------------------------------------------------------
def _three_events(run_dir: Path) -> list[str]:
    with Ledger.create(run_dir) as ledger:
        return [e.hash for e in ledger.append_records([ev(0), ev(1), ev(2)])]


def test_manifest_follows_every_commit(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        stored = ledger.append_records([ev(0), ev(1)])
        assert ledger.manifest.read() == Head(stored[-1].hash, 2)
        more = ledger.append_records([ev(2)])
        assert ledger.manifest.read() == Head(more[-1].hash, 3)


def test_open_detects_a_truncated_tail(run_dir: Path) -> None:
    _three_events(run_dir)
    _sql(run_dir, "DELETE FROM events WHERE seq = 2")
    for writable in (False, True):
        with pytest.raises(IntegrityError, match="truncated: the head manifest records 3 events but the log has 2"):
            Ledger.open(run_dir, writable=writable)


def test_open_detects_a_replaced_head(run_dir: Path) -> None:
    _three_events(run_dir)
    _sql(run_dir, "UPDATE events SET hash = ? WHERE seq = 2", "sha256:" + "1" * 64)
    with pytest.raises(IntegrityError, match="for the same 3 events"):
        Ledger.open(run_dir)


def test_open_detects_a_missing_manifest(run_dir: Path) -> None:
    _three_events(run_dir)
    (run_dir / "ledger.head").unlink()
    with pytest.raises(IntegrityError, match="is missing but the log has 3 events"):
        Ledger.open(run_dir)


def test_missing_manifest_of_an_empty_log_is_recreated(run_dir: Path) -> None:
    Ledger.create(run_dir).close()
    (run_dir / "ledger.head").unlink()
    with Ledger.open(run_dir) as ledger:
        assert ledger.head() == EMPTY_HEAD
    with Ledger.open(run_dir, writable=True) as ledger:
        assert ledger.manifest.read() == EMPTY_HEAD


def test_a_lagging_manifest_is_repaired_by_a_writable_open(run_dir: Path) -> None:
    hashes = _three_events(run_dir)
    (run_dir / "ledger.head").write_text(f'{{"count":1,"format":"evoledger.head/1","hash":"{hashes[0]}"}}')
    with Ledger.open(run_dir) as reader:  # read-only: accepted, not rewritten
        assert reader.head().count == 3
        assert reader.manifest.read() == Head(hashes[0], 1)
    with Ledger.open(run_dir, writable=True) as ledger:
        assert ledger.manifest.read() == Head(hashes[2], 3)


def test_a_manifest_that_is_not_a_prefix_is_refused(run_dir: Path) -> None:
    _three_events(run_dir)
    (run_dir / "ledger.head").write_text(f'{{"count":1,"format":"evoledger.head/1","hash":"sha256:{"2" * 64}"}}')
    with pytest.raises(IntegrityError, match="is not a prefix"):
        Ledger.open(run_dir, writable=True)


# -- appends and transactions ------------------------------------------------------------------------------
def test_append_records_defaults_to_the_current_head(run_dir: Path) -> None:
    with Ledger.create(run_dir, clock=_clock) as ledger:
        first = ledger.append_records([ev(0)])
        second = ledger.append_records([ev(1)], expected_head=CURRENT_HEAD)
        third = ledger.append_records([ev(2)], expected_head=second[0].hash)
        assert [e.seq for e in first + second + third] == [0, 1, 2]
        with pytest.raises(ConcurrencyError):
            ledger.append_records([ev(3)], expected_head=first[0].hash)
        with pytest.raises(InputError, match="expected_head=None is not allowed"):
            ledger.append_records([ev(3)], expected_head=None)  # type: ignore[arg-type]
        assert list(ledger.records()) == first + second + third


def test_transaction_commits_objects_and_events_together(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        with ledger.transaction():
            digest = ledger.objects.put(b"trajectory")
            ledger.append_records(
                [PendingEvent("episode-finished", 1, "public", canonical_json({"trajectory_digest": digest}))]
            )
            ledger.append_records([ev(1)])
            assert ledger.manifest.read() == EMPTY_HEAD  # written only once the outer commit happened
        assert ledger.manifest.read() == ledger.head()
        assert ledger.head().count == 2
    with Ledger.open(run_dir) as reader:
        assert reader.objects.get(digest) == b"trajectory"


def test_transaction_rolls_back_objects_events_and_manifest(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev(0)])
        before = ledger.head()
        digest = digest_of(b"orphan")

        def put_append_and_crash() -> None:
            with ledger.transaction():
                ledger.objects.put(b"orphan")
                ledger.append_records([ev(1), ev(2)])
                raise RuntimeError("crash")

        with pytest.raises(RuntimeError, match="crash"):
            put_append_and_crash()
        assert ledger.head() == before == ledger.manifest.read()
        assert not ledger.objects.has(digest)
        assert [e.seq for e in ledger.records()] == [0]
        assert ledger.append_records([ev(1)])[0].seq == 1  # the cached head was rolled back too


def test_a_rejected_append_inside_a_transaction_undoes_only_itself(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        with ledger.transaction():
            ledger.append_records([ev(0)])
            with pytest.raises(ConcurrencyError):
                ledger.append_records([ev(1)], expected_head=GENESIS_HASH)
            with pytest.raises(InputError):
                ledger.append_records([ev(1), PendingEvent("x", 1, "nobody", b"{}")])  # type: ignore[arg-type]
            ledger.append_records([ev(1)])
        assert [e.data()["i"] for e in ledger.records()] == [0, 1]
        assert ledger.manifest.read() == ledger.head()


def test_records_filters(run_dir: Path) -> None:
    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev(0, "a", "host"), ev(1, "b"), ev(2, "a")])
        assert [e.seq for e in ledger.records(kinds={"a"}, visibility="public")] == [2]
        assert [e.seq for e in ledger.records(1)] == [1, 2]


# -- typed helpers (the Event schema of ledger.events) ---------------------------------------------------
def test_typed_append_and_events_round_trip(run_dir: Path) -> None:
    events_module = pytest.importorskip("evoledger.ledger.events")
    digest = "sha256:" + "3" * 64
    event = events_module.BulkEvicted(
        digests=[digest], submission_ids=["submission-000001"], reason="over budget", bytes_freed=10
    )
    with Ledger.create(run_dir, clock=_clock) as ledger:
        [recorded] = ledger.append([event])
        assert isinstance(recorded, RecordedEvent)
        assert recorded.event is event
        assert recorded.stored.kind == "bulk-evicted"
        assert recorded.stored.seq == 0
        assert recorded.stored.visibility == "public"
        [read_back] = list(ledger.events())
        assert read_back == recorded
        assert list(ledger.events(kinds={"run-ended"})) == []
        with pytest.raises(ConcurrencyError):
            ledger.append([event], expected_head=GENESIS_HASH)


def test_typed_events_of_an_unknown_kind_raise_schema_error(run_dir: Path) -> None:
    pytest.importorskip("evoledger.ledger.events")
    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev(0, kind="no-such-kind")])
        with pytest.raises(LedgerError):
            list(ledger.events())
