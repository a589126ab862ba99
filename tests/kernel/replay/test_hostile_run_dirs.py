"""A run directory from someone else, crafted from a real Run: links, fifos, devices, bloated Objects, planted SQL.

Every attack goes through the real command line (``evoledger ledger verify``, ``ledger log``, ``replay``,
``replay --rebuild``, ``resume``, ``export``) in a subprocess with a timeout, and ends as a finding or a refusal
with nothing outside the run directory touched (a canary folder beside it is compared byte for byte and by
mtime) and nothing blocking.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_CLI = ("-c", "from evoledger.kernel.cli import main; main()")
_TIMEOUT = 60  # generous under load; a hang would run into it
_RSS_LIMIT_KB = 600 * 1024  # the attack used 2.2 GB (verify, replay) and 4.8 GB (export)
_DECLARED = 2 << 30  # 2 GiB declared by a frame of ~64 KB


def _cli(*args: str | Path, timeout: float = _TIMEOUT) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, *_CLI, *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)


def _cli_rss(*args: str | Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the CLI in a child of a fresh interpreter and return its result and peak RSS in KB."""
    measure = (
        "import json, resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, stdin=subprocess.DEVNULL)\n"
        "print(json.dumps([r.returncode, r.stdout, r.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    argv = [sys.executable, "-c", measure, sys.executable, *_CLI, *map(str, args)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT * 2, check=True)
    code, out, err, rss = json.loads(done.stdout)
    return subprocess.CompletedProcess(argv, code, out, err), rss


@pytest.fixture
def canary(run_copy: Path) -> Path:
    """A folder outside the run directory with files an attacker would like overwritten or deleted."""
    outside = run_copy.parent / "outside"
    (outside / "feedback").mkdir(parents=True)
    (outside / "precious.txt").write_bytes(b"keep me\n")
    (outside / "feedback" / "notes.md").write_bytes(b"also mine\n")
    (outside / "report.json").write_bytes(b'{"mine": true}\n')
    return outside


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    } | {str(p.relative_to(folder)) + "/": (b"", 0) for p in folder.rglob("*") if p.is_dir()}


def _unfinished(run_dir: Path) -> None:
    """Drop the Run's ``run-ended`` Event (and re-point the manifest), so ``resume`` finishes and writes it again."""
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    try:
        (last,) = conn.execute("SELECT max(seq) FROM events WHERE kind = 'run-ended'").fetchone()
        conn.execute("DELETE FROM events WHERE seq >= ?", (last,))
        seq, digest = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    HeadManifest(run_dir / MANIFEST_NAME).write(Head(digest, seq + 1))
    (run_dir / "host" / "report.json").unlink()


def _swap_for_link(run_dir: Path, name: str, target: Path) -> None:
    entry = run_dir / name
    if entry.is_dir() and not entry.is_symlink():
        os.rename(entry, run_dir / f"{name}.moved")
    elif entry.exists() or entry.is_symlink():
        entry.unlink()
    entry.symlink_to(target)


# -- links where the Host writes ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["workspace", "host", "control"])
def test_replay_rebuild_refuses_a_linked_folder_and_touches_nothing_outside(
    run_copy: Path, canary: Path, name: str
) -> None:
    _swap_for_link(run_copy, name, canary)
    before = _snapshot(canary)
    done = _cli("replay", run_copy, "--rebuild")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "symbolic link" in done.stderr, done.stderr
    assert name in done.stderr, done.stderr
    assert _snapshot(canary) == before


@pytest.mark.parametrize("name", ["workspace", "host", "control"])
def test_resume_refuses_a_linked_folder_and_touches_nothing_outside(run_copy: Path, canary: Path, name: str) -> None:
    _unfinished(run_copy)
    _swap_for_link(run_copy, name, canary)
    before = _snapshot(canary)
    done = _cli("resume", run_copy)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "symbolic link" in done.stderr, done.stderr
    assert f"{run_copy.resolve()}/{name}" in done.stderr, done.stderr
    assert _snapshot(canary) == before


def test_plain_replay_reports_a_linked_workspace_without_reading_through_it(run_copy: Path, canary: Path) -> None:
    _swap_for_link(run_copy, "workspace", canary)
    before = _snapshot(canary)
    done = _cli("replay", run_copy, "--json")
    assert done.returncode == 3
    report = json.loads(done.stdout)
    projections = next(c for c in report["checks"] if c["name"] == "projections")
    codes = {f["code"] for f in projections["findings"]}
    assert "path_unsafe" in codes, codes
    assert not any(c.startswith("mirror_") for c in codes), codes
    assert _snapshot(canary) == before


@pytest.mark.parametrize("name", ["ledger.lock", "ledger.head.tmp", "host/report.json"])
def test_resume_never_writes_through_a_planted_file_link(run_copy: Path, canary: Path, name: str) -> None:
    _unfinished(run_copy)
    target = canary / "precious.txt"
    (run_copy / name).symlink_to(target)
    before = _snapshot(canary)
    done = _cli("resume", run_copy)
    assert _snapshot(canary) == before, done.stdout + done.stderr
    if name == "ledger.head.tmp":  # a stale temporary name: removed (the link, not its target), then written
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (run_copy / name).exists()
    else:
        assert done.returncode == 3, done.stdout + done.stderr
        assert "symbolic link" in done.stderr, done.stderr
        assert name in done.stderr, done.stderr


def test_resume_refuses_a_fifo_as_an_agent_log(run_copy: Path) -> None:
    _unfinished(run_copy)
    os.mkfifo(run_copy / "host" / "agent-1" / "stdout.log.tmp")
    done = _cli("resume", run_copy)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "fifo" in done.stderr, done.stderr
    assert "agent-1/stdout.log.tmp" in done.stderr, done.stderr


# -- fifos and devices that must not block or bloat -----------------------------------------------------


@pytest.mark.parametrize(
    "command", [("ledger", "verify"), ("ledger", "log"), ("replay",), ("replay", "--rebuild"), ("resume",)]
)
def test_a_fifo_as_the_head_manifest_ends_every_command_with_a_finding(
    run_copy: Path, command: tuple[str, ...]
) -> None:
    (run_copy / MANIFEST_NAME).unlink()
    os.mkfifo(run_copy / MANIFEST_NAME)
    args = [*command[:1], *command[1:2]] if command[0] == "ledger" else [command[0]]
    done = _cli(*args, run_copy, *command[2 if command[0] == "ledger" else 1 :], timeout=_TIMEOUT)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "fifo" in done.stdout + done.stderr, done.stdout + done.stderr


def _bloat_object(run_dir: Path) -> str:
    """Replace the first trajectory Object's bytes by a zstd frame of ~64 KB declaring 2 GiB (row size to match)."""
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    try:
        payload = conn.execute("SELECT payload FROM events WHERE kind = 'episode-finished' ORDER BY seq").fetchone()[0]
        digest = json.loads(payload)["trajectory_digest"]
        writer = zstandard.ZstdCompressor(level=1).compressobj(size=_DECLARED)
        zeros = bytes(1 << 24)
        frame = b"".join([*(writer.compress(zeros) for _ in range(_DECLARED // len(zeros))), writer.flush()])
        assert len(frame) < 1 << 17
        conn.execute("UPDATE objects SET data = ?, size = ? WHERE digest = ?", (frame, _DECLARED, digest))
    finally:
        conn.close()
    return str(digest)


@pytest.mark.parametrize("command", ["verify", "replay", "export"])
def test_an_object_declaring_2_gib_is_a_finding_in_bounded_memory(run_copy: Path, command: str) -> None:
    digest = _bloat_object(run_copy)
    if command == "verify":
        done, rss = _cli_rss("ledger", "verify", run_copy, "--json")
        problems = json.loads(done.stdout)["problems"]
        assert {(p["code"], p["digest"]) for p in problems} >= {("object_oversize", digest)}, problems
    elif command == "replay":
        done, rss = _cli_rss("replay", run_copy, "--json")
        integrity = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "integrity")
        assert ("object_oversize", digest) in {(f["code"], f["digest"]) for f in integrity["findings"]}, integrity
    else:
        done, rss = _cli_rss("export", run_copy, "--out", run_copy.parent / "dataset")
        assert digest in done.stderr, done.stderr
        assert "cap" in done.stderr, done.stderr
    assert done.returncode == 3, done.stdout + done.stderr
    assert rss < _RSS_LIMIT_KB, f"peak RSS {rss} KB"


def test_a_link_to_dev_zero_as_an_object_file_is_a_finding(run_copy: Path) -> None:
    conn = sqlite3.connect(run_copy / "ledger.sqlite", isolation_level=None)
    try:
        (digest,) = conn.execute("SELECT digest FROM objects WHERE location = 'inline' LIMIT 1").fetchone()
        conn.execute("UPDATE objects SET location = 'file', data = NULL WHERE digest = ?", (digest,))
    finally:
        conn.close()
    folder = run_copy / "objects" / digest[7:9]
    folder.mkdir(parents=True)
    (folder / f"{digest[7:]}.zst").symlink_to("/dev/zero")
    done, rss = _cli_rss("ledger", "verify", run_copy, "--json")
    assert done.returncode == 3
    found = [p for p in json.loads(done.stdout)["problems"] if p["digest"] == digest]
    assert found, found
    assert "symbolic link" in found[0]["message"], found
    assert rss < _RSS_LIMIT_KB, f"peak RSS {rss} KB"


# -- SQL planted in ledger.sqlite -----------------------------------------------------------------------

_PLANTED = (
    "CREATE TABLE loot (what TEXT)",
    "CREATE TRIGGER steal AFTER INSERT ON events BEGIN INSERT INTO loot VALUES (NEW.payload); "
    "UPDATE objects SET data = NULL; END",
    "CREATE VIEW recent AS SELECT * FROM events ORDER BY seq DESC",
)


def _plant(run_dir: Path) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    try:
        for sql in _PLANTED:
            conn.execute(sql)
    finally:
        conn.close()


def _table(run_dir: Path, sql: str) -> list[Any]:
    conn = sqlite3.connect(f"{(run_dir / 'ledger.sqlite').as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_planted_tables_views_and_triggers_are_findings_and_resume_refuses(run_copy: Path) -> None:
    _unfinished(run_copy)
    _plant(run_copy)
    objects_before = _table(run_copy, "SELECT digest, size, location, data FROM objects ORDER BY digest")
    verified = _cli("ledger", "verify", run_copy, "--json")
    assert verified.returncode == 3
    messages = [p["message"] for p in json.loads(verified.stdout)["problems"] if p["code"] == "schema_unexpected"]
    for name in ("loot", "steal", "recent"):
        assert any(f"'{name}'" in m for m in messages), messages
    replayed = json.loads(_cli("replay", run_copy, "--json").stdout)
    integrity = next(c for c in replayed["checks"] if c["name"] == "integrity")
    assert sum(f["code"] == "schema_unexpected" for f in integrity["findings"]) == 3, integrity
    resumed = _cli("resume", run_copy)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
    assert "schema" in resumed.stderr, resumed.stderr
    assert "steal" in resumed.stderr, resumed.stderr
    assert _table(run_copy, "SELECT count(*) FROM loot") == [(0,)]  # the trigger never ran
    assert _table(run_copy, "SELECT digest, size, location, data FROM objects ORDER BY digest") == objects_before
    assert not (run_copy / "host" / "report.json").exists()


def test_resume_leaves_an_agent_owned_analysis_link_alone(run_copy: Path, canary: Path) -> None:
    """``workspace/analysis`` is the Agent's (it may link it anywhere): the Host neither refuses nor follows it."""
    _unfinished(run_copy)
    _swap_for_link(run_copy, "workspace/analysis", canary)
    before = _snapshot(canary)
    done = _cli("resume", run_copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (run_copy / "host" / "report.json").is_file()
    assert (run_copy / "workspace" / "analysis").is_symlink()
    assert _snapshot(canary) == before
