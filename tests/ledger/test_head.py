"""The head manifest: atomic rewrite, strict parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evoledger.ledger.errors import IntegrityError
from evoledger.ledger.head import EMPTY_HEAD, MANIFEST_FORMAT, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH

H = "sha256:" + "ab" * 32


def test_round_trip_and_format(tmp_path: Path) -> None:
    manifest = HeadManifest(tmp_path / "ledger.head")
    assert manifest.read() is None
    assert not manifest.exists()
    manifest.write(Head(H, 42))
    assert manifest.read() == Head(H, 42)
    assert json.loads((tmp_path / "ledger.head").read_text()) == {"format": MANIFEST_FORMAT, "hash": H, "count": 42}
    manifest.write(EMPTY_HEAD)
    assert manifest.read() == Head(GENESIS_HASH, 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ledger.head"]  # no temporary file left


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff",
        b"[]",
        json.dumps({"format": "evoledger.head/0", "hash": H, "count": 1}).encode(),
        json.dumps({"format": MANIFEST_FORMAT, "hash": "sha256:short", "count": 1}).encode(),
        json.dumps({"format": MANIFEST_FORMAT, "hash": H, "count": -1}).encode(),
        json.dumps({"format": MANIFEST_FORMAT, "hash": H, "count": "1"}).encode(),
        json.dumps({"format": MANIFEST_FORMAT, "hash": H, "count": True}).encode(),
        json.dumps({"format": MANIFEST_FORMAT, "hash": H, "count": 1, "extra": 0}).encode(),
    ],
)
def test_malformed_manifest_raises_integrity_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "ledger.head"
    path.write_bytes(content)
    with pytest.raises(IntegrityError, match="head manifest"):
        HeadManifest(path).read()


def test_write_failure_is_an_integrity_error_naming_the_file(tmp_path: Path) -> None:
    manifest = HeadManifest(tmp_path / "gone" / "ledger.head")
    with pytest.raises(IntegrityError, match="could not be written") as info:
        manifest.write(Head(H, 3))
    assert str(manifest.path) in str(info.value)


def test_unreadable_manifest_is_an_integrity_error(tmp_path: Path) -> None:
    (tmp_path / "ledger.head").mkdir()
    with pytest.raises(IntegrityError, match="cannot read the head manifest"):
        HeadManifest(tmp_path / "ledger.head").read()


def test_rewrite_replaces_the_file_atomically(tmp_path: Path) -> None:
    path = tmp_path / "ledger.head"
    manifest = HeadManifest(path)
    manifest.write(Head(H, 1))
    inode = path.stat().st_ino
    manifest.write(Head(H, 2))
    assert path.stat().st_ino != inode  # a new file renamed over the old one, never edited in place
    assert manifest.read() == Head(H, 2)
