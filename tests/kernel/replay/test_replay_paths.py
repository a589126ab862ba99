"""Replay's fast paths give the reports of the plain ones: the one shared pass, the side process, the reader."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.replay import UNFOLDED_KINDS, ReplayReport, open_record, replay, side_process
from evoledger.kernel.replay.log_pass import audit_log, fold_log, fold_projections
from evoledger.kernel.replay.side_process import can_fork, start_side_checks
from evoledger.ledger.events import from_stored
from evoledger.ledger.records import StoredEvent
from evoledger.ledger.verify import referenced_digests
from evoledger.projections import mirror, retention, run_state

needs_fork = pytest.mark.skipif(not can_fork(), reason="needs os.fork and no other thread")


def _without_times(report: ReplayReport) -> dict[str, Any]:
    data = report.to_dict()
    for check in data["checks"]:
        check["seconds"] = 0.0
    return data


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _flip_payload(tamper: Any, run: Path) -> None:
    seq = tamper.seq_of(run, "episode-finished", 2)
    payload = next(p for s, _, _, p in tamper.rows(run) if s == seq)
    tamper.execute(run, "UPDATE events SET payload = ? WHERE seq = ?", _flip(payload, len(payload) // 3), seq)


def _forge_budget(tamper: Any, run: Path) -> None:
    def more(data: dict[str, Any]) -> None:
        data["budget_before"] += 1
        data["budget_after"] += 1

    tamper.forge(run, tamper.seq_of(run, "submission-accepted", 1), more)


def _forge_episode_schema(tamper: Any, run: Path) -> None:
    """A well-chained Episode the schema refuses (an int return): the reader must leave it to pydantic."""

    def bad(data: dict[str, Any]) -> None:
        data["episode_return"] = "lots"

    tamper.forge(run, tamper.seq_of(run, "episode-finished", 1), bad)


def _edit_feedback(tamper: Any, run: Path) -> None:
    (run / "workspace" / "feedback" / "latest.json").write_text("{}\n", encoding="utf-8")


def _delete_event(tamper: Any, run: Path) -> None:
    tamper.execute(run, "DELETE FROM events WHERE seq = ?", tamper.seq_of(run, "episode-started", 3))


_DAMAGE: dict[str, Callable[[Any, Path], None]] = {
    "intact": lambda tamper, run: None,
    "flipped payload byte": _flip_payload,
    "forged budget": _forge_budget,
    "schema-invalid episode": _forge_episode_schema,
    "edited feedback file": _edit_feedback,
    "deleted event": _delete_event,
}


@needs_fork
@pytest.mark.parametrize("damage", sorted(_DAMAGE))
def test_the_side_process_and_the_serial_path_report_the_same(run_copy: Path, tamper: Any, damage: str) -> None:
    _DAMAGE[damage](tamper, run_copy)
    serial = replay(run_copy, parallel=False)
    forked = replay(run_copy, parallel=True)
    assert _without_times(forked) == _without_times(serial)
    assert serial.ok == (damage == "intact")


def test_the_schema_invalid_episode_is_a_projection_finding_on_both_paths(run_copy: Path, tamper: Any) -> None:
    _forge_episode_schema(tamper, run_copy)
    codes = {f.code for f in replay(run_copy, parallel=False).check("projections").findings}
    assert "schema" in codes


@needs_fork
def test_a_side_process_that_fails_reports_none(run_copy: Path, tmp_path: Path) -> None:
    with open_record(run_copy) as record:  # the child is told a Run directory without a database
        side = start_side_checks(tmp_path, record, episode_cap=10_000, max_problems=200, force=True)
        assert side is not None
        assert side.collect() is None
        assert next(record.objects.entries()).digest.startswith("sha256:")  # this side reopened its database


@needs_fork
def test_a_side_process_that_dies_reports_none(run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The child of a small Run can finish before the kill reaches it; hold it first, so it is killed mid-work.
    checks = side_process._side

    def held(*a: Any, **k: Any) -> Any:
        time.sleep(60)
        return checks(*a, **k)

    monkeypatch.setattr(side_process, "_side", held)
    with open_record(run_copy) as record:
        side = start_side_checks(run_copy, record, episode_cap=10_000, max_problems=200, force=True)
        assert side is not None
        os.kill(side.pid, signal.SIGKILL)
        assert side.collect() is None


def test_no_side_process_while_another_thread_runs(run_copy: Path) -> None:
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not can_fork()
        with open_record(run_copy) as record:
            assert start_side_checks(run_copy, record, episode_cap=10_000, max_problems=200, force=True) is None
    finally:
        stop.set()
        worker.join()


def test_small_logs_are_not_worth_a_side_process(recorded_run: Path) -> None:
    with open_record(recorded_run) as record:
        assert start_side_checks(recorded_run, record, episode_cap=10_000, max_problems=200) is None


def test_the_shared_pass_equals_the_separate_folds(recorded_run: Path) -> None:
    with open_record(recorded_run) as record:
        rows = record.rows
        folded = fold_log(rows, episode_cap=10_000, max_violations=200)
        assert folded.audit == audit_log(rows, episode_cap=10_000, max_violations=200)
        assert folded.projections == fold_projections(rows)
        events = [
            (visibility, from_stored(StoredEvent(seq, kind, version, visibility, payload, "", "", "")))
            for seq, kind, version, visibility, payload, *_ in rows
            if kind not in UNFOLDED_KINDS  # the check folds these kinds out: they change no projection
        ]
        assert folded.projections.run_state == functools.reduce(
            run_state.apply, (e for _, e in events), run_state.RunState()
        )
        expected_mirror = mirror.MirrorState()
        for visibility, event in events:
            expected_mirror = mirror.apply(expected_mirror, event, visibility)
        assert folded.projections.mirror == expected_mirror
        assert folded.projections.retention == functools.reduce(
            retention.apply, (e for _, e in events), retention.RetentionState()
        )
        assert folded.references, "the fixture's Episodes reference trajectories"
        payloads = {row[0]: row[4] for row in rows}
        for seq, digests in folded.references.items():
            assert set(digests) == set(referenced_digests(payloads[seq]))
