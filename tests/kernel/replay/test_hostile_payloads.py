"""A crafted payload is a finding naming its seq, never a traceback; recorded text never drives the terminal.

Each test rewrites one Event of a real recorded Run with raw bytes no writer produces (re-chained, with a
matching manifest, so only the payload itself is wrong) and drives the real command line.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from evoledger.ledger.canonical import MAX_PAYLOAD_BYTES, canonical_json, parse_payload
from evoledger.ledger.errors import EncodingError
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH, chain_hash
from evoledger.ledger.store import Ledger

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

Cli = Callable[..., CompletedProcess[str]]
EVIL = "\x1b[2J\x1b[32mok: 0 problems\r"


def _rechain(tamper: Any, run_dir: Path, edit: Callable[[int, str, bytes], tuple[str, bytes]]) -> None:
    """Rewrite every row's ``(kind, payload)`` with ``edit`` and re-chain the log and its manifest."""
    conn = tamper.connect(run_dir)
    try:
        rows = conn.execute("SELECT seq, kind, version, visibility, payload FROM events ORDER BY seq").fetchall()
        prev = GENESIS_HASH
        conn.execute("BEGIN")
        for seq, kind, version, visibility, payload in rows:
            kind, payload = edit(seq, kind, bytes(payload))
            digest = chain_hash(prev, kind, version, visibility, payload)
            conn.execute(
                "UPDATE events SET kind = ?, payload = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                (kind, payload, prev, digest, seq),
            )
            prev = digest
        conn.execute("COMMIT")
    finally:
        conn.close()
    HeadManifest(run_dir / MANIFEST_NAME).write(Head(prev, len(rows)))


_BAD: dict[str, Callable[[bytes], bytes]] = {
    "deep": lambda p: p[:-1] + b',"deep":' + b"[" * 10_000 + b"]" * 10_000 + b"}",
    "long_integer": lambda p: p[:-1] + b',"n":' + b"9" * 5_000 + b"}",
    "invalid_utf8": lambda p: p[:-1] + b',"s":"\xff\xfe"}',
    "huge_string": lambda p: p[:-1] + b',"s":"' + b"a" * (MAX_PAYLOAD_BYTES + 1) + b'"}',
}


def _craft(tamper: Any, run_dir: Path, how: str) -> int:
    seq = tamper.seq_of(run_dir, "submission-accepted", 1)
    _rechain(tamper, run_dir, lambda s, kind, payload: (kind, _BAD[how](payload) if s == seq else payload))
    return seq


def _names_seq(output: str, seq: int) -> bool:
    return re.search(rf"(seq\W{{0,4}}|#|event ){seq}\b", output) is not None


@pytest.mark.parametrize("how", sorted(_BAD))
def test_parse_payload_refuses_what_no_writer_produces(how: str) -> None:
    with pytest.raises(EncodingError):
        parse_payload(_BAD[how](canonical_json({"a": 1})))


def test_parse_payload_reads_integers_beyond_64_bits_and_sane_nesting() -> None:
    assert parse_payload(canonical_json({"n": 2**70, "x": [[[1]]]})) == {"n": 2**70, "x": [[[1]]]}


@pytest.mark.parametrize("how", sorted(_BAD))
@pytest.mark.parametrize(
    "command",
    [("ledger", "verify"), ("ledger", "log"), ("ledger", "log", "--json"), ("replay",), ("export",)],
    ids=["verify", "log", "log-json", "replay", "export"],
)
def test_a_crafted_payload_is_a_finding_naming_its_seq_in_every_command(
    run_copy: Path, tamper: Any, replay_cli: Cli, how: str, command: tuple[str, ...], tmp_path: Path
) -> None:
    if how == "huge_string" and command[0] == "export":
        pytest.skip("covered by verify/log/replay; export reads the same Events through the same schema")
    seq = _craft(tamper, run_copy, how)
    extra = ("--out", str(tmp_path / "dataset")) if command == ("export",) else ()
    done = replay_cli(*command, str(run_copy), *extra)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode != 0, output[-3000:]
    assert _names_seq(output.replace("\n", " "), seq), output[-3000:]


@pytest.fixture
def evil_run(run_copy: Path, tamper: Any) -> Path:
    """A Run whose directory name, an Event's text and a timestamp hold terminal control sequences."""
    episode = tamper.seq_of(run_copy, "episode-finished")

    def edit(seq: int, kind: str, payload: bytes) -> tuple[str, bytes]:
        if seq != episode:
            return kind, payload
        data = json.loads(payload)
        data["submission_id"] = EVIL
        return kind, canonical_json(data)

    _rechain(tamper, run_copy, edit)
    tamper.execute(run_copy, "UPDATE events SET recorded_at = ? WHERE seq = 3", EVIL)
    named = run_copy.parent / f"x{EVIL}"
    shutil.move(run_copy, named)
    return named


@pytest.mark.parametrize(
    "command", [("ledger", "verify"), ("ledger", "log"), ("replay",)], ids=["verify", "log", "replay"]
)
def test_control_characters_in_recorded_text_are_printed_escaped(
    evil_run: Path, replay_cli: Cli, command: tuple[str, ...]
) -> None:
    done = replay_cli(*command, str(evil_run))  # run_copy's clean-up removes the renamed folder too
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert "\x1b" not in output, output[-3000:]
    assert "x1b" in output, output[-3000:]  # shown, as text
    assert "x0d" in output, output[-3000:]  # (text=True would turn a raw carriage return into a newline)


_BAD_OBSERVATION: dict[str, bytes] = {
    "deep": b"[" * 5_000 + b"1" + b"]" * 5_000,
    "long_integer": b"9" * 5_000,
    "invalid_utf8": b'"\xff"',
}


@pytest.mark.parametrize("how", sorted(_BAD_OBSERVATION))
def test_a_crafted_trajectory_object_stops_export_with_an_error_naming_the_episode(
    run_copy: Path, tamper: Any, replay_cli: Cli, how: str, tmp_path: Path
) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished")
    with Ledger.open(run_copy, writable=True) as book:
        raw = book.objects.get(tamper.payload(run_copy, seq)["trajectory_digest"])
        start = b'"observations":['
        crafted = book.objects.put(raw.replace(start, start + _BAD_OBSERVATION[how] + b",", 1))

    def point(data: dict[str, Any]) -> None:
        data["trajectory_digest"] = crafted

    tamper.forge(run_copy, seq, point)
    done = replay_cli("export", str(run_copy), "--out", str(tmp_path / "dataset"), "--json-spaces")
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode == 3, output[-3000:]
    assert "Episode" in output, output[-3000:]
