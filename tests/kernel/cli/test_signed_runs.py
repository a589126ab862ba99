"""Signed Runs through the real command line: a Run recorded by `evoledger run` verifies with its Host's key, fails
with any other, and a log rewritten consistently (re-chained, new manifest) by someone without the key fails."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH, chain_hash
from evoledger.ledger.signing import SIGNATURE_NAME, HeadSigner
from evoledger.ledger.signing_keys import SigningKey

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

SMALL = ["--validation-episodes", "0", "--assessment-episodes", "2", "--episode-budget", "4"]
Cli = Callable[..., subprocess.CompletedProcess[str]]


def _cli(home: Path) -> Cli:
    env = {**os.environ, "EVOLEDGER_HOME": str(home)}

    def invoke(*args: str) -> subprocess.CompletedProcess[str]:
        code = "from evoledger.kernel.cli import main; main()"
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, check=False, env=env
        )

    return invoke


@pytest.fixture(scope="module")
def signed_run() -> Iterator[tuple[Path, Path]]:
    """A real Run recorded by `evoledger run` with the default key of a fresh EVOLEDGER_HOME: (run, home)."""
    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))  # short: Unix socket paths are length-limited
    home = root / "home"
    done = _cli(home)("run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", str(root / "run"), "--json")
    assert done.returncode == 0, done.stderr
    yield root / "run", home
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def work(signed_run: tuple[Path, Path]) -> Iterator[tuple[Path, Cli, str]]:
    """A fresh copy of the signed Run, the CLI with its Host's home, and that Host's public key (text form)."""
    source, home = signed_run
    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))
    shutil.copytree(source, root / "run", ignore=shutil.ignore_patterns("session.sock", "ledger.lock"))
    shutil.copytree(home, root / "home")
    cli = _cli(root / "home")
    exported = cli("keys", "export")
    assert exported.returncode == 0, exported.stderr
    yield root / "run", cli, exported.stdout.strip()
    shutil.rmtree(root, ignore_errors=True)


def _verify(cli: Cli, run: Path, *trusted: str) -> tuple[int, dict[str, Any]]:
    args = ["ledger", "verify", str(run), "--json"]
    if trusted:
        args += ["--trusted-key", trusted[0]]
    done = cli(*args)
    return done.returncode, json.loads(done.stdout)


def _rewrite(run: Path, kind: str, edit: Callable[[dict[str, Any]], None], signer: SigningKey | None = None) -> None:
    """Edit the first ``kind`` Event, re-chain the log and rewrite the manifest: integrity holds afterwards.

    With ``signer`` the forger also signs the new head with his own key.
    """
    conn = sqlite3.connect(run / "ledger.sqlite", isolation_level=None)
    try:
        rows = conn.execute("SELECT seq, kind, version, visibility, payload FROM events ORDER BY seq").fetchall()
        target = next(seq for seq, k, *_ in rows if k == kind)
        prev = GENESIS_HASH
        conn.execute("BEGIN")
        for seq, k, version, visibility, payload in rows:
            if seq == target:
                data = json.loads(payload)
                edit(data)
                payload = canonical_json(data)
            digest = chain_hash(prev, k, version, visibility, payload)
            conn.execute(
                "UPDATE events SET payload = ?, prev_hash = ?, hash = ? WHERE seq = ?", (payload, prev, digest, seq)
            )
            prev = digest
        conn.execute("COMMIT")
    finally:
        conn.close()
    head = Head(prev, len(rows))
    HeadManifest(run / MANIFEST_NAME).write(head)
    if signer is not None:
        HeadSigner(signer, run.name).write(run, head)


def test_a_signed_run_verifies_with_its_key_and_fails_with_another(work: tuple[Path, Cli, str]) -> None:
    run, cli, public = work
    code, report = _verify(cli, run, public)
    assert code == 0, report
    assert report["signature"]["status"] == "trusted"
    fingerprint = report["signature"]["fingerprint"]
    shown = json.loads(cli("keys", "show", "--json").stdout)
    assert shown["fingerprint"] == fingerprint
    assert _verify(cli, run, fingerprint)[0] == 0  # a fingerprint is enough to name the trusted key

    created = cli("keys", "create", "--out", str(run.parent / "other.pem"), "--json")
    assert created.returncode == 0, created.stderr
    other = json.loads(created.stdout)
    code, report = _verify(cli, run, other["public_key"])
    assert code == 3
    assert report["signature"]["code"] == "signer_not_trusted"
    human = cli("ledger", "verify", str(run), "--trusted-key", other["fingerprint"])
    assert human.returncode == 3
    text = " ".join(human.stdout.split())
    assert f"signed by {fingerprint}, not by the trusted key {other['fingerprint']}" in text


def test_without_a_trusted_key_verify_reports_who_signed_but_proves_nothing_about_who(
    work: tuple[Path, Cli, str],
) -> None:
    run, cli, _public = work
    code, report = _verify(cli, run)
    assert code == 0
    assert report["signature"]["status"] == "signed"
    assert "--trusted-key" in report["signature"]["message"]


def test_a_consistently_rewritten_log_fails_signature_verification(work: tuple[Path, Cli, str]) -> None:
    run, cli, public = work
    _rewrite(run, "run-created", lambda data: data.__setitem__("created_by", "a forger"))
    code, report = _verify(cli, run, public)
    assert code == 3
    assert report["problems"] == []  # chain and manifest hold: only the signature tells
    assert report["signature"]["code"] == "signature_stale"
    assert _verify(cli, run)[1]["signature"]["status"] == "invalid"  # even without a trusted key
    replayed = cli("replay", str(run), "--json")
    assert replayed.returncode == 3
    assert json.loads(replayed.stdout)["first_failure"]["code"] == "signature_stale"


def test_a_rewrite_signed_by_the_forgers_own_key_fails_against_the_trusted_key(work: tuple[Path, Cli, str]) -> None:
    run, cli, public = work
    forger = SigningKey.generate()
    signer = {"algorithm": "ed25519", "fingerprint": forger.fingerprint, "public_key": forger.public.hex}
    _rewrite(run, "run-created", lambda data: data.__setitem__("signer", signer), signer=forger)
    code, report = _verify(cli, run)
    assert code == 0  # a consistent forgery under a new key: valid, but by whom is the question
    assert report["signature"]["fingerprint"] == forger.fingerprint
    code, report = _verify(cli, run, public)
    assert code == 3
    assert report["signature"]["code"] == "signer_not_trusted"


def test_reports_carry_the_fingerprint(work: tuple[Path, Cli, str]) -> None:
    run, cli, _public = work
    fingerprint = json.loads(cli("keys", "show", "--json").stdout)["fingerprint"]
    assert json.loads((run / "host" / "report.json").read_text())["signer"] == fingerprint
    replayed = cli("replay", str(run), "--json")
    assert replayed.returncode == 0, replayed.stdout
    assert json.loads(replayed.stdout)["signature"]["fingerprint"] == fingerprint


def test_resume_signs_the_head_again_and_refuses_another_key(work: tuple[Path, Cli, str]) -> None:
    run, cli, public = work
    (run / SIGNATURE_NAME).unlink()  # e.g. the Host died between the manifest and the signature
    assert _verify(cli, run, public)[1]["signature"]["code"] == "signature_missing"
    other = run.parent / "other.pem"
    assert cli("keys", "create", "--out", str(other)).returncode == 0
    refused = cli("resume", str(run), "--signing-key", str(other))
    assert refused.returncode == 2
    assert "--signing-key" in refused.stderr
    assert not (run / SIGNATURE_NAME).exists()
    resumed = cli("resume", str(run), "--json")
    assert resumed.returncode == 0, resumed.stderr
    code, report = _verify(cli, run, public)
    assert code == 0, report
    assert report["signature"]["status"] == "trusted"


def test_keys_commands(tmp_path: Path) -> None:
    cli = _cli(tmp_path / "home")
    shown = cli("keys", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["path"] == str(tmp_path / "home" / "signing-key.pem")
    assert (tmp_path / "home" / "signing-key.pem").stat().st_mode & 0o777 == 0o600
    assert cli("keys", "export").stdout.strip() == data["public_key"]
    again = cli("keys", "create")
    assert again.returncode == 2
    assert "never overwrites" in again.stderr
    for command in (["keys"], ["keys", "show"], ["keys", "create"], ["keys", "export"]):
        assert "Example" in cli(*command, "--help").stdout
    link = tmp_path / "link.pem"
    link.symlink_to(tmp_path / "home" / "signing-key.pem")
    refused = cli("keys", "export", "--key", str(link))
    assert refused.returncode == 2
    assert "symlink" in refused.stderr


def test_an_evaluation_record_is_signed_too(tmp_path: Path) -> None:
    cli = _cli(tmp_path / "home")
    done = cli("evaluate", "-b", "frozen-lake", "-n", "2", "--record-to", str(tmp_path / "eval"), "--json")
    assert done.returncode == 0, done.stderr
    public = cli("keys", "export").stdout.strip()
    code, report = _verify(cli, tmp_path / "eval", public)
    assert code == 0, report
    assert report["signature"]["status"] == "trusted"


def test_a_bundled_run_unbundles_verified_and_replays(work: tuple[Path, Cli, str]) -> None:
    run, cli, public = work
    shared = run.parent / "run.evoledger"
    done = cli("bundle", str(run), "--out", str(shared), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["signed"] is True
    copy = run.parent / "received"
    unpacked = cli("unbundle", str(shared), "--out", str(copy), "--trusted-key", public, "--json")
    assert unpacked.returncode == 0, unpacked.stderr
    assert json.loads(unpacked.stdout)["status"] == "trusted"
    assert not (copy / "workspace").exists()  # nothing a replay can rebuild is shipped
    replayed = cli("replay", str(copy), "--rebuild", "--trusted-key", public)
    assert replayed.returncode == 0, replayed.stdout
    refused = cli("unbundle", str(shared), "--out", str(run.parent / "other"), "--trusted-key", "ed25519:" + "0" * 32)
    assert refused.returncode == 3
    assert not (run.parent / "other").exists()


def test_an_export_card_names_the_signer_and_the_verdict(work: tuple[Path, Cli, str]) -> None:
    pytest.importorskip("pyarrow")
    run, cli, _public = work
    fingerprint = json.loads(cli("keys", "show", "--json").stdout)["fingerprint"]
    done = cli("export", str(run), "--out", str(run.parent / "dataset"))
    assert done.returncode == 0, done.stderr
    card = (run.parent / "dataset" / "README.md").read_text(encoding="utf-8")
    assert f'signer: "{fingerprint}"' in card
    assert f"signed by `{fingerprint}`" in card
