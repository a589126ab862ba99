"""Bundles: a record packs into one file and unpacks to a verifying copy; a hostile bundle is refused whole,
before anything is written (no file, no folder, nothing outside the target)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from evoledger.ledger.bundle import bundle, unbundle
from evoledger.ledger.errors import InputError, IntegrityError
from evoledger.ledger.events import BenchmarkIdentity, RunCreated, Signer
from evoledger.ledger.signing import HeadSigner
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify

KEY = SigningKey.from_seed(bytes(range(32)))


@pytest.fixture
def record(tmp_path: Path) -> Path:
    root = tmp_path / "run-1"
    with Ledger.create(root, large_threshold=64) as ledger:
        ledger.sign_heads(HeadSigner(KEY, "run-1"))
        ledger.objects.put(b"a large Object kept as a file " * 10)
        ledger.append(
            [
                RunCreated(
                    run_id="run-1",
                    benchmark=BenchmarkIdentity.of("toy", {}),
                    episode_budget=1,
                    max_submissions=1,
                    pool_commitment="sha256:" + "1" * 64,
                    created_by="test",
                    signer=Signer.of(KEY.public.hex),
                )
            ]
        )
    return root


def test_a_bundle_round_trips_to_a_verifying_signed_copy_and_is_reproducible(record: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.evoledger"
    summary = bundle(record, out)
    assert summary.signed
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert names[:3] == ["ledger.sqlite", "ledger.head", "ledger.sig"]
    assert len(names) == 4
    assert names[3].startswith("objects/")
    again = tmp_path / "again.evoledger"
    bundle(record, again)
    assert again.read_bytes() == out.read_bytes()
    unpacked, signature = unbundle(out, tmp_path / "copy", trusted=KEY.public)
    assert unpacked.members == 4
    assert signature.status == "trusted"
    assert verify(tmp_path / "copy").ok
    with pytest.raises(InputError, match="never overwrites"):
        bundle(record, out)
    with pytest.raises(InputError, match="already exists"):
        unbundle(out, tmp_path / "copy")


def _tar(path: Path, add: Callable[[tarfile.TarFile], None], base: Path | None = None) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        if base is not None:
            with tarfile.open(base) as source:
                for info in source.getmembers():
                    tar.addfile(info, source.extractfile(info))
        add(tar)
    return path


def _file(name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE) -> Callable[[tarfile.TarFile], None]:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
            info.linkname = "/etc/passwd"
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

    return add


@pytest.mark.parametrize(
    ("add", "message"),
    [
        (_file("/tmp/evil"), "not a name"),
        (_file("../evil"), "not a name"),
        (_file("objects/../../evil"), "not a name"),
        (_file("objects/ab/" + "cd" * 32 + ".zst"), "not a name"),  # folder and name disagree
        (_file("workspace/program/policy.py"), "not a name"),
        (_file("ledger.sig", kind=tarfile.SYMTYPE), "not a regular file"),
        (_file("ledger.sig", kind=tarfile.LNKTYPE), "not a regular file"),
        (_file("ledger.sig", kind=tarfile.CHRTYPE), "not a regular file"),
        (_file("ledger.sig", kind=tarfile.FIFOTYPE), "not a regular file"),
        (_file("objects", kind=tarfile.DIRTYPE), "not a regular file"),
        (_file("ledger.head"), "twice"),
    ],
)
def test_a_hostile_member_refuses_the_whole_bundle_before_anything_is_written(
    record: Path, tmp_path: Path, add: Callable[[tarfile.TarFile], None], message: str
) -> None:
    good = tmp_path / "good.evoledger"
    bundle(record, good)
    hostile = _tar(tmp_path / "hostile.evoledger", add, base=good)
    target = tmp_path / "unpacked" / "run"
    with pytest.raises(IntegrityError, match=message):
        unbundle(hostile, target)
    assert not (tmp_path / "unpacked").exists()  # refused before even the parent folder was made
    assert not Path("/tmp/evil").exists()


def test_sizes_are_capped(record: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.evoledger"
    summary = bundle(record, good)
    with pytest.raises(IntegrityError, match="more than"):
        unbundle(good, tmp_path / "out", max_bytes=summary.bytes - 1)
    assert not (tmp_path / "out").exists()


def test_a_huge_extended_header_is_refused_before_tarfile_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "pax.evoledger"
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("ledger.head")
        info.pax_headers = {"comment": "x" * 200_000}
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(IntegrityError, match="extended tar header"):
        unbundle(path, tmp_path / "out")


def test_a_tampered_or_untrusted_bundle_is_refused(record: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.evoledger"
    bundle(record, good)
    other = SigningKey.from_seed(bytes(32))
    with pytest.raises(IntegrityError, match="signature is untrusted"):
        unbundle(good, tmp_path / "a", trusted=other.fingerprint)
    data = bytearray(good.read_bytes())
    at = data.index(b"created_by") + 14  # inside the run-created payload in ledger.sqlite
    data[at] ^= 1
    bad = tmp_path / "bad.evoledger"
    bad.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="fails verification"):
        unbundle(bad, tmp_path / "b")
    assert not (tmp_path / "a").exists()
    assert not (tmp_path / "b").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.evoledger", "good.evoledger", "run-1"]


def test_a_fifo_is_not_a_bundle(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        unbundle(fifo, tmp_path / "out")
