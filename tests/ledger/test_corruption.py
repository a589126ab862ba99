"""Damage on disk is always detected: flipped bytes, deleted or reordered rows, lost Object bytes.

A small real ledger is built once; each case damages a fresh copy. For bytes that hold event
payloads or Object bytes, ``verify`` must report a problem (never a silent ok). For bytes anywhere in
the file, nothing may escape as a non-evoledger exception from ``verify`` or from opening and reading,
and whatever reading trips over, ``verify`` reports too.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EvoLedgerError, IntegrityError, LedgerError
from evoledger.ledger.records import PendingEvent
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import VerifyReport, verify

THRESHOLD = 4096


def _build(run_dir: Path) -> dict[str, object]:
    rng = random.Random(7)
    with Ledger.create(run_dir, large_threshold=THRESHOLD) as ledger:
        blobs = [rng.randbytes(300) for _ in range(4)]  # incompressible: their zstd bytes are findable
        digests = ledger.objects.put_many(blobs)
        large = ledger.objects.put(rng.randbytes(THRESHOLD * 2))
        events = [
            PendingEvent(
                "episode-finished",
                1,
                "public" if i % 3 else "host",
                canonical_json(
                    {
                        "episode": i,
                        "return": i * 1.5,
                        "note": f"event number {i} " + "abcdefgh" * 4,
                        "trajectory_digest": digests[i % len(digests)],
                    }
                ),
            )
            for i in range(12)
        ]
        events.append(PendingEvent("feedback-published", 1, "public", canonical_json({"content_digest": large})))
        ledger.append_records(events)
    assert not (run_dir / "ledger.sqlite-wal").exists()  # checkpointed: every byte is in the main file
    return {"payloads": [e.payload for e in events], "digests": digests, "large": large}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    run_dir = tmp_path_factory.mktemp("pristine") / "run"
    facts = _build(run_dir)
    assert verify(run_dir).ok
    return run_dir, facts


def _copy(pristine_dir: Path, tmp_path: Path, name: str = "copy") -> Path:
    target = tmp_path / name
    shutil.copytree(pristine_dir, target)
    return target


def _flip(path: Path, offset: int, mask: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def _open_and_read_everything(run_dir: Path) -> None:
    """Open read-only, stream every event and every Object; only our errors may escape."""
    with Ledger.open(run_dir) as ledger:
        for _ in ledger.records():
            pass
        for entry in ledger.objects.entries():
            if entry.state != "evicted":
                ledger.objects.get(entry.digest)


def _protected_offsets(pristine_dir: Path, facts: dict[str, object]) -> list[int]:
    """Byte offsets in ledger.sqlite that belong to an event payload or an Object's stored bytes."""
    data = (pristine_dir / "ledger.sqlite").read_bytes()
    conn = sqlite3.connect(pristine_dir / "ledger.sqlite")
    blobs = [row[0] for row in conn.execute("SELECT data FROM objects WHERE data IS NOT NULL")]
    conn.close()
    offsets: list[int] = []
    for needle in [*facts["payloads"], *blobs]:  # type: ignore[misc]
        start = data.find(needle)
        assert start >= 0, "each payload and Object is stored contiguously in the file"
        offsets.extend(range(start, start + len(needle)))
    return offsets


def _sample(population: list[int], k: int, seed: int) -> list[int]:
    return sorted(random.Random(seed).sample(population, min(k, len(population))))


def test_every_flipped_payload_or_object_byte_is_reported(
    pristine: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    pristine_dir, facts = pristine
    offsets = _protected_offsets(pristine_dir, facts)
    assert len(offsets) > 3000
    for n, offset in enumerate(_sample(offsets, 60, seed=1)):
        run_dir = _copy(pristine_dir, tmp_path, f"c{n}")
        _flip(run_dir / "ledger.sqlite", offset, 1 << (n % 8))
        report = verify(run_dir)
        assert not report.ok, f"flipping byte {offset} went unnoticed"
        assert report.first_problem is not None
        assert report.first_problem.message
        with contextlib.suppress(EvoLedgerError):
            _open_and_read_everything(run_dir)
        shutil.rmtree(run_dir)


def test_flipped_bytes_anywhere_never_escape_as_foreign_exceptions(
    pristine: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    pristine_dir, _ = pristine
    size = (pristine_dir / "ledger.sqlite").stat().st_size
    for n, offset in enumerate(_sample(list(range(size)), 50, seed=2)):
        run_dir = _copy(pristine_dir, tmp_path, f"c{n}")
        _flip(run_dir / "ledger.sqlite", offset, 0xFF)
        report = verify(run_dir)
        reading_error: EvoLedgerError | None = None
        try:
            _open_and_read_everything(run_dir)
        except EvoLedgerError as exc:
            reading_error = exc
        if reading_error is not None:
            assert not report.ok, f"verify missed damage at byte {offset} that reading hit: {reading_error}"
        shutil.rmtree(run_dir)


def test_truncated_database_file(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    path = run_dir / "ledger.sqlite"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert not verify(run_dir).ok
    with pytest.raises(LedgerError):
        _open_and_read_everything(run_dir)


# -- targeted damage ------------------------------------------------------------------------------------
def _sql(run_dir: Path, *statements: str) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    for statement in statements:
        conn.execute(statement)
    conn.close()


def _codes(report: VerifyReport) -> set[str]:
    return {p.code for p in report.problems if p.severity == "error"}


def test_deleted_middle_event(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    _sql(run_dir, "DELETE FROM events WHERE seq = 6")
    assert _codes(verify(run_dir)) == {"seq_gap", "broken_link"}


def test_deleted_tail_with_manifest_untouched(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    manifest = (run_dir / "ledger.head").read_bytes()
    _sql(run_dir, "DELETE FROM events WHERE seq >= 11")
    assert (run_dir / "ledger.head").read_bytes() == manifest
    assert _codes(verify(run_dir)) == {"truncated_tail"}
    with pytest.raises(IntegrityError, match="truncated"):
        Ledger.open(run_dir)


def test_swapped_seq_of_two_events(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    _sql(
        run_dir,
        "UPDATE events SET seq = -1 WHERE seq = 4",
        "UPDATE events SET seq = 4 WHERE seq = 5",
        "UPDATE events SET seq = 5 WHERE seq = -1",
    )
    report = verify(run_dir)
    assert "broken_link" in _codes(report)
    assert report.first_problem is not None
    assert report.first_problem.seq == 4


def test_deleted_object_row(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    digest = pristine[1]["digests"][2]  # type: ignore[index]
    _sql(run_dir, f"DELETE FROM objects WHERE digest = '{digest}'")
    report = verify(run_dir)
    assert _codes(report) == {"object_missing"}
    assert {p.digest for p in report.problems} == {digest}


def test_flipped_byte_in_a_large_object_file(pristine: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    run_dir = _copy(pristine[0], tmp_path)
    large = str(pristine[1]["large"])
    path = run_dir / "objects" / large[7:9] / f"{large[7:]}.zst"
    for offset in (0, 5, path.stat().st_size // 2, path.stat().st_size - 1):
        _flip(path, offset, 0x04)
        report = verify(run_dir)
        assert _codes(report) == {"object_corrupt"}, offset
        assert report.problems[0].digest == large
        _flip(path, offset, 0x04)
    assert verify(run_dir).ok
