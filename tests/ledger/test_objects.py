"""The content-addressed Object store: digests, compression, dedup, eviction, large files, damage."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from evoledger.ledger.errors import InputError, IntegrityError, ObjectEvictedError, ObjectMissingError
from evoledger.ledger.store import Ledger

THRESHOLD = 4096


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger.create(tmp_path / "run", large_threshold=THRESHOLD)
    yield led
    led.close()


def _rows(run_dir: Path) -> list[tuple[str, int, str, bytes | None]]:
    with sqlite3.connect(run_dir / "ledger.sqlite") as conn:
        return conn.execute("SELECT digest, size, location, data FROM objects ORDER BY digest").fetchall()


def _sql(run_dir: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    conn.execute(statement, params)
    conn.close()


def test_put_returns_sha256_of_raw_bytes_and_get_round_trips(ledger: Ledger) -> None:
    data = b"hello " * 100
    digest = ledger.objects.put(data)
    assert digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert ledger.objects.get(digest) == data
    assert ledger.objects.has(digest)
    assert ledger.objects.size(digest) == len(data)
    assert ledger.objects.state(digest) == "inline"


def test_objects_are_stored_zstd_compressed(ledger: Ledger) -> None:
    data = b"abc" * 1000
    digest = ledger.objects.put(data)
    [(row_digest, size, location, blob)] = _rows(ledger.path)
    assert (row_digest, size, location) == (digest, len(data), "inline")
    assert blob is not None
    assert len(blob) < len(data) // 10
    assert zstandard.ZstdDecompressor().decompress(blob) == data


def test_put_is_idempotent(ledger: Ledger) -> None:
    first = ledger.objects.put(b"same")
    second = ledger.objects.put(b"same")
    assert first == second
    assert len(_rows(ledger.path)) == 1


def test_empty_object_is_fine(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"")
    assert ledger.objects.get(digest) == b""
    assert ledger.objects.size(digest) == 0


def test_put_many_returns_digests_in_order_and_dedups(ledger: Ledger) -> None:
    blobs: list[bytes | bytearray] = [b"a", b"b", b"a", bytearray(b"c"), b"x" * (THRESHOLD + 1)]
    digests = ledger.objects.put_many(blobs)
    assert digests == ["sha256:" + hashlib.sha256(bytes(b)).hexdigest() for b in blobs]
    assert len(_rows(ledger.path)) == 4
    assert [ledger.objects.get(d) for d in digests] == [bytes(b) for b in blobs]


def test_put_many_rejects_non_bytes_and_stores_nothing(ledger: Ledger) -> None:
    with pytest.raises(InputError, match="must be bytes, got str"):
        ledger.objects.put_many([b"ok", "not bytes"])  # type: ignore[list-item]
    assert _rows(ledger.path) == []


def test_get_of_unknown_digest_raises_missing(ledger: Ledger) -> None:
    unknown = "sha256:" + "ab" * 32
    with pytest.raises(ObjectMissingError, match="no Object sha256:abab"):
        ledger.objects.get(unknown)
    with pytest.raises(ObjectMissingError):
        ledger.objects.size(unknown)
    assert not ledger.objects.has(unknown)
    assert ledger.objects.state(unknown) is None


@pytest.mark.parametrize("bad", ["sha256:xyz", "md5:" + "0" * 32, "sha256:" + "A" * 64, "", 42])
def test_malformed_digest_is_refused_by_name(ledger: Ledger, bad: object) -> None:
    for call in (ledger.objects.get, ledger.objects.size, ledger.objects.evict, ledger.objects.state):
        with pytest.raises(ObjectMissingError, match="is not an Object digest") as info:
            call(bad)  # type: ignore[arg-type]
        assert repr(bad)[:20] in str(info.value)
    assert ledger.objects.has(bad) is False  # type: ignore[arg-type]


def test_evict_leaves_a_tombstone(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"bulk feedback")
    ledger.objects.evict(digest)
    with pytest.raises(ObjectEvictedError, match="evicted by bulk retention"):
        ledger.objects.get(digest)
    assert not ledger.objects.has(digest)
    assert ledger.objects.state(digest) == "evicted"
    assert ledger.objects.size(digest) == len(b"bulk feedback")
    [(_, _, location, blob)] = _rows(ledger.path)
    assert (location, blob) == ("evicted", None)
    ledger.objects.evict(digest)  # twice is fine
    assert ledger.objects.state(digest) == "evicted"


def test_evict_unknown_digest_raises_missing_and_evicts_nothing(ledger: Ledger) -> None:
    known = ledger.objects.put(b"keep")
    with pytest.raises(ObjectMissingError, match="cannot evict"):
        ledger.objects.evict_many([known, "sha256:" + "0" * 64])
    assert ledger.objects.get(known) == b"keep"  # the batch rolled back


def test_put_restores_an_evicted_object(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"again")
    ledger.objects.evict(digest)
    assert ledger.objects.put(b"again") == digest
    assert ledger.objects.get(digest) == b"again"


def test_large_objects_live_in_files(ledger: Ledger) -> None:
    data = bytes(range(256)) * 64  # 16 KiB > threshold
    digest = ledger.objects.put(data)
    hexpart = digest[7:]
    path = ledger.path / "objects" / hexpart[:2] / f"{hexpart}.zst"
    assert path.is_file()
    assert ledger.objects.path_for(digest) == path
    assert zstandard.ZstdDecompressor().decompress(path.read_bytes()) == data
    [(_, size, location, blob)] = _rows(ledger.path)
    assert (size, location, blob) == (len(data), "file", None)
    assert ledger.objects.get(digest) == data
    assert ledger.objects.put(data) == digest  # idempotent, no rewrite needed
    assert not list(path.parent.glob(".*.tmp"))


def test_evicting_a_large_object_deletes_its_file_and_put_restores_it(ledger: Ledger) -> None:
    data = b"L" * (THRESHOLD * 2)
    digest = ledger.objects.put(data)
    path = ledger.objects.path_for(digest)
    ledger.objects.evict(digest)
    assert not path.exists()
    with pytest.raises(ObjectEvictedError):
        ledger.objects.get(digest)
    ledger.objects.put(data)
    assert path.exists()
    assert ledger.objects.get(digest) == data


def test_eviction_rolled_back_keeps_the_file(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"F" * (THRESHOLD * 2))

    def evict_and_abort() -> None:
        with ledger.transaction():
            ledger.objects.evict(digest)
            raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        evict_and_abort()
    assert ledger.objects.path_for(digest).exists()
    assert ledger.objects.state(digest) == "file"


def test_large_object_file_deleted_is_missing(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"G" * (THRESHOLD * 2))
    ledger.objects.path_for(digest).unlink()
    with pytest.raises(ObjectMissingError, match="file is missing"):
        ledger.objects.get(digest)
    ledger.objects.put(b"G" * (THRESHOLD * 2))  # putting the bytes again heals it
    assert ledger.objects.get(digest) == b"G" * (THRESHOLD * 2)


def test_large_object_file_flipped_byte_is_detected(ledger: Ledger) -> None:
    data = bytes(range(256)) * 64
    digest = ledger.objects.put(data)
    path = ledger.objects.path_for(digest)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(IntegrityError, match=f"Object {digest} is damaged"):
        ledger.objects.get(digest)


def test_inline_bytes_of_another_object_are_detected(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"original")
    other = zstandard.ZstdCompressor().compress(b"forgery!")
    _sql(ledger.path, "UPDATE objects SET data = ? WHERE digest = ?", other, digest)
    with pytest.raises(IntegrityError, match="hash to sha256:"):
        ledger.objects.get(digest)


def test_inline_garbage_and_size_mismatch_are_detected(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"original")
    _sql(ledger.path, "UPDATE objects SET size = 3 WHERE digest = ?", digest)
    with pytest.raises(IntegrityError, match="declares 8 bytes"):
        ledger.objects.get(digest)
    _sql(ledger.path, "UPDATE objects SET data = ?, size = 8 WHERE digest = ?", b"garbage!", digest)
    with pytest.raises(IntegrityError, match="zstd frame is unreadable"):
        ledger.objects.get(digest)


def test_entries_lists_every_row(ledger: Ledger) -> None:
    small = ledger.objects.put(b"s")
    big = ledger.objects.put(b"B" * (THRESHOLD + 5))
    gone = ledger.objects.put(b"g")
    ledger.objects.evict(gone)
    states = {e.digest: (e.size, e.state) for e in ledger.objects.entries()}
    assert states == {small: (1, "inline"), big: (THRESHOLD + 5, "file"), gone: (1, "evicted")}


def test_read_only_ledger_refuses_puts_and_evictions(ledger: Ledger) -> None:
    digest = ledger.objects.put(b"x")
    with Ledger.open(ledger.path) as reader:
        assert reader.objects.get(digest) == b"x"
        with pytest.raises(InputError, match="opened read-only"):
            reader.objects.put(b"y")
        with pytest.raises(InputError, match="opened read-only"):
            reader.objects.evict(digest)


def test_invalid_threshold_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="large_threshold"):
        Ledger.create(tmp_path / "r", large_threshold=0)
    assert not (tmp_path / "r").exists()
