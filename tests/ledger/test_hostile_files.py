"""The Ledger's own files as hostile input (links, fifos, devices, big frames, planted SQL): never followed or run."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zstandard
from evoledger.ledger.database import SCHEMA, Database
from evoledger.ledger.errors import (
    IntegrityError,
    ObjectOversizeError,
    SchemaError,
    UnsafePathError,
)
from evoledger.ledger.head import HeadManifest
from evoledger.ledger.objects import ObjectStore
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify

THRESHOLD = 4096


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    with Ledger.create(tmp_path / "run", large_threshold=THRESHOLD) as ledger:
        ledger.objects.put(b"small")
        ledger.objects.put(os.urandom(THRESHOLD * 2))  # a file Object
    return tmp_path / "run"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside.txt"
    target.write_bytes(b"keep me\n")
    return target


def _frame(declared: int) -> bytes:
    writer = zstandard.ZstdCompressor(level=1).compressobj(size=declared)
    zeros = bytes(1 << 24)
    return b"".join([*(writer.compress(zeros) for _ in range(declared // len(zeros))), writer.flush()])


def _replace_object(run_dir: Path, data: bytes, size: int) -> str:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    try:
        (digest,) = conn.execute("SELECT digest FROM objects WHERE location = 'inline'").fetchone()
        conn.execute("UPDATE objects SET data = ?, size = ? WHERE digest = ?", (data, size, digest))
    finally:
        conn.close()
    return str(digest)


def test_the_schema_a_ledger_is_created_with_is_exactly_the_checked_one(run_dir: Path) -> None:
    with sqlite3.connect(run_dir / "ledger.sqlite") as conn:
        assert set(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")) == set(SCHEMA)
    db = Database.open(run_dir / "ledger.sqlite", writable=True)
    assert db.schema_problems == ()
    db.close()


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("CREATE TABLE loot (x)", "unexpected table 'loot'"),
        ("CREATE VIEW recent AS SELECT seq FROM events", "unexpected view 'recent'"),
        ("CREATE TRIGGER steal AFTER INSERT ON events BEGIN DELETE FROM objects; END", "unexpected trigger 'steal'"),
        ("CREATE INDEX by_kind ON events(kind)", "unexpected index 'by_kind'"),
    ],
)
def test_planted_schema_is_listed_read_only_and_refused_for_writing(run_dir: Path, sql: str, named: str) -> None:
    with sqlite3.connect(run_dir / "ledger.sqlite") as conn:
        conn.execute(sql)
    db = Database.open(run_dir / "ledger.sqlite", writable=False)
    assert db.schema_problems == (named,)
    db.close()
    with pytest.raises(SchemaError, match=named):
        Ledger.open(run_dir, writable=True)
    assert [p.code for p in verify(run_dir).problems] == ["schema_unexpected"]


def test_a_view_in_place_of_a_core_table_is_never_read(run_dir: Path) -> None:
    with sqlite3.connect(run_dir / "ledger.sqlite") as conn:
        conn.execute("ALTER TABLE objects RENAME TO real_objects")
        conn.execute(
            "CREATE VIEW objects AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
            "SELECT 'x' AS digest, i AS size, 'inline' AS location, NULL AS data FROM n"
        )
    with pytest.raises(SchemaError, match="changed view 'objects'"):
        Database.open(run_dir / "ledger.sqlite", writable=False)
    assert "schema_unexpected" in {p.code for p in verify(run_dir).problems}


def test_trusted_schema_is_off_on_every_connection(run_dir: Path) -> None:
    for writable in (False, True):
        db = Database.open(run_dir / "ledger.sqlite", writable=writable)
        assert db.conn.execute("PRAGMA trusted_schema").fetchone() == (0,)
        db.close()


@pytest.mark.parametrize("name", ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"])
def test_a_linked_database_file_is_refused(run_dir: Path, outside: Path, name: str) -> None:
    entry = run_dir / name
    if entry.exists():
        os.rename(entry, run_dir.parent / "moved")
        outside = run_dir.parent / "moved"
    entry.symlink_to(outside)
    before = outside.read_bytes()
    with pytest.raises(UnsafePathError, match="symbolic link"):
        Database.open(run_dir / "ledger.sqlite", writable=True)
    assert outside.read_bytes() == before


def test_a_linked_lock_file_is_refused_and_its_target_untouched(run_dir: Path, outside: Path) -> None:
    (run_dir / "ledger.lock").unlink(missing_ok=True)
    (run_dir / "ledger.lock").symlink_to(outside)
    with pytest.raises(UnsafePathError, match=r"ledger\.lock is a symbolic link"):
        Ledger.open(run_dir, writable=True)
    assert outside.read_bytes() == b"keep me\n"


def test_a_linked_temporary_manifest_is_replaced_not_written_through(run_dir: Path, outside: Path) -> None:
    (run_dir / "ledger.head.tmp").symlink_to(outside)
    with Ledger.open(run_dir, writable=True) as ledger:
        ledger.manifest.write(ledger.head())
    assert outside.read_bytes() == b"keep me\n"
    assert not (run_dir / "ledger.head.tmp").exists()


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "link"])
def test_an_odd_head_manifest_is_an_integrity_error_without_blocking(run_dir: Path, outside: Path, kind: str) -> None:
    manifest = run_dir / "ledger.head"
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero" if kind != "link" else outside)
    start = time.monotonic()
    with pytest.raises(IntegrityError, match=r"(fifo|symbolic link)"):
        HeadManifest(manifest).read()
    assert time.monotonic() - start < 10
    assert "manifest_malformed" in {p.code for p in verify(run_dir).problems}


def test_an_object_above_the_cap_is_never_decompressed(run_dir: Path) -> None:
    declared = 256 << 20
    digest = _replace_object(run_dir, _frame(declared), declared)
    db = Database.open(run_dir / "ledger.sqlite", writable=False)
    try:
        store = ObjectStore(db, run_dir / "objects", max_object_bytes=64 << 20)
        with pytest.raises(ObjectOversizeError, match="above the cap of 67108864 bytes"):
            store.get(digest)
        with pytest.raises(ObjectOversizeError):
            store.check(digest)
    finally:
        db.close()


def test_checking_an_object_under_the_cap_streams_it_in_bounded_memory(run_dir: Path) -> None:
    """A 512 MiB frame (under the 1 GiB cap) whose bytes are not its digest's: verify finds it holding one chunk."""
    declared = 512 << 20
    digest = _replace_object(run_dir, _frame(declared), declared)
    measure = (
        "import sys\n"
        "from evoledger.ledger.verify import verify\n"
        "report = verify(sys.argv[1])\n"
        "print([(p.code, p.digest) for p in report.problems])\n"
        # VmHWM is this process's own peak: ru_maxrss would carry pytest's peak over the exec (Linux keeps it)
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, str(run_dir)], capture_output=True, text=True, timeout=120, check=True
    )
    problems, rss = done.stdout.splitlines()
    assert problems == str([("object_corrupt", digest)])
    assert int(rss) < 200 * 1024, f"peak RSS {rss} KB for a {declared}-byte Object"


@pytest.mark.parametrize("where", ["objects", "objects/ab", "file"])
def test_object_files_are_never_read_or_written_through_links(run_dir: Path, tmp_path: Path, where: str) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite")
    (digest,) = conn.execute("SELECT digest FROM objects WHERE location = 'file'").fetchone()
    conn.close()
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    folder = run_dir / "objects" / digest[7:9]
    real = {"objects": run_dir / "objects", "objects/ab": folder, "file": folder / f"{digest[7:]}.zst"}[where]
    os.rename(real, decoy / "moved")
    real.symlink_to(decoy / "moved")
    with Ledger.open(run_dir, writable=True, large_threshold=THRESHOLD) as ledger:
        with pytest.raises(IntegrityError, match="symbolic link"):
            ledger.objects.get(digest)
        if where == "objects":
            with pytest.raises(IntegrityError, match="symbolic link"):
                ledger.objects.put(os.urandom(THRESHOLD * 2))  # a new Object file: its folder is not followed either
        ledger.objects.evict(digest)  # deletes the file after the commit: never through the link
    assert [p.name for p in decoy.iterdir()] == ["moved"]
    assert (decoy / "moved").exists()
