"""Tamper with a real recorded Run on disk; replay must name the right check and the first damaged place."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from evoledger.kernel.replay import ReplayReport, replay


def _failure(report: ReplayReport) -> tuple[str, str, int | None, str | None, str | None]:
    failure = report.first_failure
    assert failure is not None, report.to_json()
    name, finding = failure
    return name, finding.code, finding.seq, finding.digest, finding.path


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def test_a_flipped_byte_in_an_event_payload_fails_integrity_at_that_seq(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished", 3)
    payload = next(p for s, _, _, p in tamper.rows(run_copy) if s == seq)
    tamper.execute(run_copy, "UPDATE events SET payload = ? WHERE seq = ?", _flip(payload, len(payload) // 2), seq)
    report = replay(run_copy)
    assert not report.ok
    assert report.exit_code == 3
    assert _failure(report)[:3] == ("integrity", "hash_mismatch", seq)


def test_a_flipped_byte_in_an_object_fails_integrity_naming_the_digest(run_copy: Path, tamper) -> None:
    digest = tamper.payload(run_copy, tamper.seq_of(run_copy, "episode-finished", 0))["trajectory_digest"]
    conn = tamper.connect(run_copy)
    (blob,) = conn.execute("SELECT data FROM objects WHERE digest = ?", (digest,)).fetchone()
    conn.execute("UPDATE objects SET data = ? WHERE digest = ?", (_flip(blob, len(blob) - 3), digest))
    conn.close()
    report = replay(run_copy)
    name, code, _seq, found_digest, _path = _failure(report)
    assert (name, code, found_digest) == ("integrity", "object_corrupt", digest)
    assert report.check("protocol").status == "pass"  # the log itself is intact


def test_a_deleted_middle_event_fails_integrity_where_the_chain_breaks(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished", 2)
    tamper.execute(run_copy, "DELETE FROM events WHERE seq = ?", seq)
    report = replay(run_copy)
    assert _failure(report)[:3] == ("integrity", "seq_gap", seq + 1)
    assert "seq_order" in {f.code for f in report.check("protocol").findings}


def test_a_deleted_tail_fails_integrity_against_the_manifest(run_copy: Path, tamper) -> None:
    count = len(tamper.rows(run_copy))
    tamper.execute(run_copy, "DELETE FROM events WHERE seq >= ?", count - 2)
    report = replay(run_copy)
    assert _failure(report)[:3] == ("integrity", "truncated_tail", count - 2)
    # the truncated log no longer ends the Run, so host/report.json no longer matches the run state either
    assert report.check("projections").status == "fail"
    assert any("has not ended" in f.message for f in report.check("protocol").findings)


def test_two_swapped_events_fail_integrity_at_the_first_of_them(run_copy: Path, tamper) -> None:
    first, second = tamper.seq_of(run_copy, "episode-finished", 0), tamper.seq_of(run_copy, "episode-finished", 1)
    conn = tamper.connect(run_copy)
    columns = "kind, version, visibility, payload, prev_hash, hash, recorded_at"
    a = conn.execute(f"SELECT {columns} FROM events WHERE seq = ?", (first,)).fetchone()
    b = conn.execute(f"SELECT {columns} FROM events WHERE seq = ?", (second,)).fetchone()
    sets = ", ".join(f"{c.strip()} = ?" for c in columns.split(","))
    conn.execute(f"UPDATE events SET {sets} WHERE seq = ?", (*b, first))
    conn.execute(f"UPDATE events SET {sets} WHERE seq = ?", (*a, second))
    conn.close()
    report = replay(run_copy)
    name, _code, seq, _digest, _path = _failure(report)
    assert (name, seq) == ("integrity", first)


def test_a_removed_object_fails_integrity_naming_the_digest(run_copy: Path, tamper) -> None:
    digest = tamper.payload(run_copy, tamper.seq_of(run_copy, "episode-finished", 1))["trajectory_digest"]
    tamper.execute(run_copy, "DELETE FROM objects WHERE digest = ?", digest)
    name, code, _seq, found_digest, _path = _failure(replay(run_copy))
    assert (name, code, found_digest) == ("integrity", "object_missing", digest)


def test_an_edited_feedback_file_fails_projections_naming_the_file(run_copy: Path) -> None:
    path = run_copy / "workspace" / "feedback" / "submission-000001" / "feedback.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"score"', '"score" ', 1), encoding="utf-8")
    report = replay(run_copy)
    assert report.check("integrity").status == "pass"
    assert report.check("protocol").status == "pass"
    assert _failure(report) == (
        "projections",
        "mirror_changed",
        None,
        None,
        "workspace/feedback/submission-000001/feedback.json",
    )


def test_the_cli_exits_3_and_names_the_damaged_event(
    run_copy: Path, tamper, replay_cli: Callable[..., CompletedProcess[str]]
) -> None:
    seq = tamper.seq_of(run_copy, "submission-accepted", 1)
    payload = next(p for s, _, _, p in tamper.rows(run_copy) if s == seq)
    tamper.execute(run_copy, "UPDATE events SET payload = ? WHERE seq = ?", _flip(payload, 5), seq)
    done = replay_cli("replay", str(run_copy), "--json")
    assert done.returncode == 3, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert report["first_failure"]["check"] == "integrity"
    assert report["first_failure"]["seq"] == seq


def test_the_cli_exits_3_for_an_edited_mirror_file_and_says_which(
    run_copy: Path, replay_cli: Callable[..., CompletedProcess[str]]
) -> None:
    (run_copy / "workspace" / "feedback" / "latest.json").write_text("{}\n", encoding="utf-8")
    done = replay_cli("replay", str(run_copy))
    assert done.returncode == 3, done.stderr
    assert "FAILED" in done.stdout
    assert "workspace/feedback/latest.json" in done.stdout.replace("\n", "")
