"""Signing keys (files, modes, symlinks, text forms) and head signatures (``ledger.sig``) checked against a log."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import BenchmarkIdentity, RunCreated, Signer
from evoledger.ledger.head import Head
from evoledger.ledger.signature_check import check_signature
from evoledger.ledger.signing import SIGNATURE_NAME, HeadSigner, read_signature, statement
from evoledger.ledger.signing_keys import (
    PublicKey,
    SigningKey,
    create_key_file,
    default_key_path,
    load_key_file,
    load_or_create_default_key,
    parse_trusted_key,
)
from evoledger.ledger.store import Ledger

KEY = SigningKey.from_seed(bytes(range(32)))
OTHER = SigningKey.from_seed(bytes(range(1, 33)))


def _signed_ledger(root: Path, key: SigningKey | None = KEY, run_id: str = "run-1") -> Path:
    with Ledger.create(root) as ledger:
        if key is not None:
            ledger.sign_heads(HeadSigner(key, run_id))
        ledger.append(
            [
                RunCreated(
                    run_id=run_id,
                    benchmark=BenchmarkIdentity.of("toy", {}),
                    episode_budget=1,
                    max_submissions=1,
                    pool_commitment="sha256:" + "1" * 64,
                    created_by="test",
                    signer=None if key is None else Signer.of(key.public.hex),
                )
            ]
        )
    return root


def _head(root: Path) -> Head:
    with Ledger.open(root) as ledger:
        return ledger.head()


# -- key files ---------------------------------------------------------------------------------------------


def test_a_new_key_file_is_0600_in_a_0700_folder_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "lab.pem"
    key = create_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_key_file(path).fingerprint == key.fingerprint
    assert [p.name for p in path.parent.iterdir()] == ["lab.pem"]  # no temporary file left behind


def test_an_existing_key_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "lab.pem"
    first = create_key_file(path)
    with pytest.raises(ConfigError, match="never overwrites"):
        create_key_file(path)
    assert load_key_file(path).fingerprint == first.fingerprint


def test_a_symlinked_key_path_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    real = tmp_path / "real.pem"
    create_key_file(real)
    link = tmp_path / "link.pem"
    link.symlink_to(real)
    with pytest.raises(ConfigError, match="symlink"):
        load_key_file(link)
    dangling = tmp_path / "dangling.pem"
    dangling.symlink_to(tmp_path / "target-of-a-planted-link")
    with pytest.raises(ConfigError, match="never overwrites"):
        create_key_file(dangling)
    assert not (tmp_path / "target-of-a-planted-link").exists()


def test_a_symlinked_key_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "home").symlink_to(elsewhere)
    monkeypatch.setenv("EVOLEDGER_HOME", str(tmp_path / "home"))
    with pytest.raises(ConfigError, match="symlink"):
        load_or_create_default_key()
    assert list(elsewhere.iterdir()) == []


def test_a_key_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "lab.pem"
    create_key_file(path)
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_key_file(path)


def test_the_default_key_is_created_once_under_evoledger_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLEDGER_HOME", str(tmp_path / "home"))
    first = load_or_create_default_key()
    assert first.path == default_key_path() == tmp_path / "home" / "signing-key.pem"
    assert load_or_create_default_key().fingerprint == first.fingerprint
    monkeypatch.delenv("EVOLEDGER_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_key_path() == tmp_path / "xdg" / "evoledger" / "signing-key.pem"


def test_trusted_keys_are_read_from_text_files_pem_and_fingerprints(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    assert parse_trusted_key(KEY.public.text) == KEY.public
    assert parse_trusted_key(KEY.fingerprint) == KEY.fingerprint
    text_file = tmp_path / "lab.pub"
    text_file.write_text(KEY.public.text + "\n")
    assert parse_trusted_key(str(text_file)) == KEY.public
    pem = tmp_path / "lab.pub.pem"
    pem.write_bytes(
        Ed25519PublicKey.from_public_bytes(KEY.public.raw).public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    assert parse_trusted_key(str(pem)) == KEY.public
    private = tmp_path / "lab.pem"
    create_key_file(private)
    with pytest.raises(InputError, match="private key"):
        parse_trusted_key(str(private))
    with pytest.raises(InputError, match="neither a fingerprint"):
        parse_trusted_key("ed25519:nothex")


# -- signatures --------------------------------------------------------------------------------------------


def test_every_commit_is_signed_and_the_signature_verifies(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    signed = read_signature(root)
    assert signed is not None
    assert signed.head == _head(root)
    assert signed.valid()
    assert KEY.public.verifies(signed.signature, statement("run-1", signed.head))
    report = check_signature(root, log_head=_head(root), trusted=KEY.public)
    assert (report.status, report.ok, report.fingerprint) == ("trusted", True, KEY.fingerprint)
    assert check_signature(root, log_head=_head(root)).status == "signed"


def test_another_trusted_key_fails_with_a_clear_message(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    report = check_signature(root, log_head=_head(root), trusted=OTHER.fingerprint)
    assert (report.status, report.code, report.ok) == ("untrusted", "signer_not_trusted", False)
    assert KEY.fingerprint in report.message
    assert OTHER.fingerprint in report.message


def test_an_unsigned_record_says_so_and_fails_only_when_a_key_is_trusted(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run", key=None)
    assert not (root / SIGNATURE_NAME).exists()
    assert check_signature(root, log_head=_head(root)).status == "unsigned"
    report = check_signature(root, log_head=_head(root), trusted=KEY.public)
    assert (report.status, report.ok) == ("untrusted", False)


def test_a_signature_over_a_shorter_prefix_says_the_later_events_are_unsigned(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    old = (root / SIGNATURE_NAME).read_bytes()
    with Ledger.open(root, writable=True) as ledger:  # appended without the key: the signature lags
        ledger.append([RunCreated(**_created_fields("run-1"))])
    (root / SIGNATURE_NAME).write_bytes(old)
    report = check_signature(root, log_head=_head(root), trusted=KEY.public)
    assert (report.status, report.code) == ("invalid", "signature_behind")
    assert "resume" in report.message


def test_a_log_signed_again_by_another_key_fails_against_the_recorded_and_the_trusted_key(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    HeadSigner(OTHER, "run-1").write(root, _head(root))  # a forger's own key: the signature is valid, but not his
    report = check_signature(root, log_head=_head(root))
    assert (report.status, report.code) == ("invalid", "signer_mismatch")
    assert check_signature(root, log_head=_head(root), trusted=KEY.public).status == "invalid"


def test_a_removed_or_damaged_signature_is_invalid(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    data = json.loads((root / SIGNATURE_NAME).read_bytes())
    data["signature"] = ("0" if data["signature"][0] != "0" else "1") + data["signature"][1:]
    (root / SIGNATURE_NAME).write_text(json.dumps(data))
    assert check_signature(root, log_head=_head(root)).code == "signature_invalid"
    (root / SIGNATURE_NAME).write_text("{")
    assert check_signature(root, log_head=_head(root)).code == "signature_malformed"
    (root / SIGNATURE_NAME).unlink()
    assert check_signature(root, log_head=_head(root)).code == "signature_missing"


def test_a_planted_signature_symlink_or_fifo_is_never_followed(tmp_path: Path) -> None:
    root = _signed_ledger(tmp_path / "run")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    sig = root / SIGNATURE_NAME
    sig.unlink()
    sig.symlink_to(outside)
    assert check_signature(root, log_head=_head(root)).code == "signature_malformed"
    (root / (SIGNATURE_NAME + ".tmp")).symlink_to(outside)
    HeadSigner(KEY, "run-1").write(root, _head(root))  # replaces the links, writes nothing through them
    assert outside.read_text() == "keep me\n"
    assert not sig.is_symlink()
    assert check_signature(root, log_head=_head(root), trusted=KEY.public).status == "trusted"
    sig.unlink()
    os.mkfifo(sig)
    assert check_signature(root, log_head=_head(root)).code == "signature_malformed"  # no hang


def _created_fields(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "benchmark": BenchmarkIdentity.of("toy", {}),
        "episode_budget": 1,
        "max_submissions": 1,
        "pool_commitment": "sha256:" + "1" * 64,
        "created_by": "test",
    }


def test_public_key_text_form_round_trips() -> None:
    assert PublicKey.from_hex(KEY.public.hex) == KEY.public
    assert KEY.public.text.startswith("evoledger-ed25519 ")
    assert repr(KEY).startswith("SigningKey(ed25519:")
