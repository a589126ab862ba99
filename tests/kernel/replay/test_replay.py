"""Replay of an untouched real Run, of forged-but-well-chained logs, --execute, --rebuild and the error paths."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from evoledger.kernel.replay import UNFOLDED_KINDS, replay
from evoledger.ledger.errors import LedgerNotFoundError
from evoledger.ledger.events import InfraFaultDetail, RequestFailed
from evoledger.ledger.store import Ledger
from evoledger.projections import mirror, retention, run_state


def _codes(report: Any, check: str) -> set[str]:
    return {f.code for f in report.check(check).findings if f.severity == "error"}


def test_a_clean_run_passes_every_check(recorded_run: Path) -> None:
    report = replay(recorded_run)
    assert report.ok, report.to_json()
    assert [c.status for c in report.checks] == ["pass", "pass", "pass", "skipped"]
    assert report.exit_code == 0
    assert report.first_failure is None
    summary = report.check("projections").summary
    assert "evicted digests" in summary
    assert " 0 evicted" not in summary
    notes = [f.message for f in report.check("protocol").findings if f.code == "score_direction"]
    assert notes == ["score direction maximize from run-created's benchmark_spec"]


def test_execute_reproduces_every_recorded_trajectory_digest(recorded_run: Path) -> None:
    report = replay(recorded_run, execute=True)
    execution = report.check("execution")
    assert execution.status == "pass", report.to_json()
    assert execution.findings == ()
    # 12 training Episodes, 2 Validation Episodes for each of the Candidates, 2 Assessment Episodes
    with Ledger.open(recorded_run) as book:
        kinds = [r.kind for r in book.records()]
        candidates = next(r.event for r in book.events(kinds=["finish-accepted"])).candidates  # type: ignore[attr-defined]
    expected = kinds.count("episode-finished") + 2 * len(candidates) + 2
    assert execution.summary.startswith(f"{expected} of {expected} Episodes reproduced")


def test_execute_reports_an_episode_whose_record_does_not_match_what_runs(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished", 4)

    def bump(data: dict[str, Any]) -> None:
        data["episode_return"] = data["episode_return"] + 1.0

    tamper.forge(run_copy, seq, bump)
    report = replay(run_copy, execute=True)
    assert report.check("integrity").status == "pass"  # the forger re-chained the log
    [finding] = report.check("execution").findings
    assert (finding.code, finding.seq) == ("not_reproduced", seq)
    assert finding.digest is not None
    assert finding.digest in finding.message


def test_a_forged_budget_is_caught_by_the_protocol_audit(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "submission-accepted", 1)

    def more_budget(data: dict[str, Any]) -> None:
        data["budget_before"] += 3
        data["budget_after"] += 3

    tamper.forge(run_copy, seq, more_budget)
    report = replay(run_copy)
    assert report.check("integrity").status == "pass"
    name, finding = report.first_failure or ("", None)
    assert name == "protocol"
    assert finding is not None
    assert (finding.code, finding.seq) == ("budget_mismatch", seq)
    assert "budget_not_conserved" in _codes(report, "protocol")


def test_a_forged_selection_is_caught_by_the_protocol_audit(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "candidate-selected")
    data = tamper.payload(run_copy, seq)
    others = [s for s in data["scores"] if s["submission_id"] != data["submission_id"]]
    assert others, "the fixture Run must have at least two Candidates"

    def pick_another(payload: dict[str, Any]) -> None:
        payload["submission_id"], payload["program_digest"] = others[0]["submission_id"], others[0]["program_digest"]

    tamper.forge(run_copy, seq, pick_another)
    codes = _codes(replay(run_copy), "protocol")
    assert {"wrong_selection", "assessment_not_selected", "end_selection"} <= codes


def test_a_seed_forged_into_a_public_event_is_caught(run_copy: Path, tamper) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished", 0)
    secret = tamper.payload(run_copy, tamper.seq_of(run_copy, "episode-planned", 5))["env_seed"]

    def leak(payload: dict[str, Any]) -> None:
        payload["metrics"] = {"note": f"planned with {secret}"}

    tamper.forge(run_copy, seq, leak)
    report = replay(run_copy)
    [finding] = [f for f in report.check("protocol").findings if f.severity == "error"]
    assert (finding.code, finding.seq) == ("seed_value_public", seq)
    assert str(secret) in finding.message


def test_an_edited_host_report_fails_projections(run_copy: Path) -> None:
    path = run_copy / "host" / "report.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["budget_used"] -= 1
    path.write_text(json.dumps(data), encoding="utf-8")
    report = replay(run_copy)
    finding = report.check("projections").first_error
    assert finding is not None
    assert (finding.code, finding.path) == ("report_mismatch", "host/report.json")
    assert "budget_used" in finding.message


def test_an_eviction_outside_bulk_retention_fails_integrity_and_projections(run_copy: Path, tamper) -> None:
    digest = tamper.payload(run_copy, tamper.seq_of(run_copy, "episode-finished", 0))["trajectory_digest"]
    tamper.execute(run_copy, "UPDATE objects SET location = 'evicted', data = NULL WHERE digest = ?", digest)
    report = replay(run_copy)
    assert "object_evicted_unrecorded" in _codes(report, "integrity")
    finding = report.check("projections").first_error
    assert finding is not None
    assert (finding.code, finding.digest) == ("eviction_unrecorded", digest)


def test_rebuild_restores_a_deleted_mirror_byte_for_byte(run_copy: Path) -> None:
    feedback = run_copy / "workspace" / "feedback"
    before = {p.relative_to(feedback): p.read_bytes() for p in feedback.rglob("*") if p.is_file()}
    assert len(before) > 3
    shutil.rmtree(feedback)
    broken = replay(run_copy)
    assert _codes(broken, "projections") == {"mirror_missing"}
    assert {f.path for f in broken.check("projections").findings} == {
        f"workspace/feedback/{p.as_posix()}" for p in before
    }
    report = replay(run_copy, rebuild=True)
    assert report.ok, report.to_json()
    assert report.rebuilt is not None
    assert report.rebuilt["written"] == len(before)
    after = {p.relative_to(feedback): p.read_bytes() for p in feedback.rglob("*") if p.is_file()}
    assert after == before


def test_rebuild_through_the_cli(run_copy: Path, replay_cli: Callable[..., CompletedProcess[str]]) -> None:
    shutil.rmtree(run_copy / "workspace" / "feedback")
    done = replay_cli("replay", str(run_copy), "--rebuild")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rebuilt" in done.stdout
    assert "every check passed" in done.stdout


def test_a_directory_without_a_ledger_is_a_clear_error(tmp_path: Path, replay_cli: Callable[..., Any]) -> None:
    with pytest.raises(LedgerNotFoundError, match="no Run in"):
        replay(tmp_path)
    done = replay_cli("replay", str(tmp_path))
    assert done.returncode == 3
    assert "no Run in" in done.stderr


def test_unreadable_database_is_reported_and_the_other_checks_are_skipped(run_copy: Path) -> None:
    for extra in ("ledger.sqlite-wal", "ledger.sqlite-shm"):
        (run_copy / extra).unlink(missing_ok=True)
    (run_copy / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    report = replay(run_copy)
    assert report.check("integrity").status == "fail"
    assert [report.check(n).status for n in ("protocol", "projections", "execution")] == ["skipped"] * 3


@pytest.mark.parametrize("kind", sorted(UNFOLDED_KINDS))
def test_kinds_the_projection_check_does_not_parse_change_no_projection(recorded_run: Path, kind: str) -> None:
    with Ledger.open(recorded_run) as book:
        recorded = list(book.events())
    prefix = recorded[: next(i for i, r in enumerate(recorded) if r.stored.kind == "candidate-selected")]
    found = next((r.event for r in recorded if r.stored.kind == kind), None)
    # The recorded Run has no infra fault and no failed request: such Events are made up, for the first Submission.
    made_up = {
        "infra-fault-detail": InfraFaultDetail(
            submission_id="submission-000001", split="train", index=0, message="boom"
        ),
        "request-failed": RequestFailed(method="submit", error_type="KeyError", message="'x'", traceback="Traceback"),
    }
    event = found or made_up[kind]
    assert event.kind == kind
    state = run_state.fold(r.event for r in prefix)
    assert replace(run_state.apply(state, event), events=state.events) == state
    mirrored = mirror.fold((r.stored.visibility, r.event) for r in prefix)
    assert replace(mirror.apply(mirrored, event, event.visibility), events=mirrored.events) == mirrored
    kept = retention.fold(r.event for r in prefix)
    assert retention.apply(kept, event) == kept


def test_an_older_record_without_a_recorded_direction_takes_it_from_the_registry(run_copy: Path, tamper) -> None:
    def undirected(selection: dict[str, Any]) -> None:  # distinct scores, and a tie-break that names no direction
        selection["tie_break"] = "custom"
        best = next(c for c in selection["scores"] if c["submission_id"] == selection["submission_id"])
        for n, other in enumerate(c for c in selection["scores"] if c is not best):
            other["score"] = (best["score"] or 0.0) - 1.0 - n

    tamper.forge(run_copy, 0, lambda created: created.pop("benchmark_spec", None))
    tamper.forge(run_copy, tamper.seq_of(run_copy, "candidate-selected"), undirected)
    report = replay(run_copy)
    assert report.check("protocol").status == "pass", report.to_json()
    [note] = [f.message for f in report.check("protocol").findings if f.code == "score_direction"]
    assert note.startswith("score direction maximize from the Benchmark registry ('cartpole')")


def test_a_configuration_this_version_cannot_read_is_reported_and_execution_fails(run_copy: Path, tamper) -> None:
    tamper.forge(run_copy, 0, lambda created: created["config"].update(unknown_setting=1))
    report = replay(run_copy, execute=True)
    assert report.check("protocol").status == "pass"  # the audit derives its rules from the recorded values
    assert "config_unreadable" in {f.code for f in report.check("protocol").findings if f.severity == "warning"}
    assert any("not re-checked" in f.message for f in report.check("projections").findings)
    execution = report.check("execution")
    assert execution.status == "fail"
    assert execution.first_error is not None
    assert execution.first_error.code == "config_unreadable"


def test_an_unreadable_report_and_an_unrenderable_mirror_are_findings(run_copy: Path, tamper) -> None:
    (run_copy / "host" / "report.json").write_text("{not json", encoding="utf-8")
    content = tamper.payload(run_copy, tamper.seq_of(run_copy, "feedback-published", 0))["content_digest"]
    tamper.execute(run_copy, "DELETE FROM objects WHERE digest = ?", content)
    report = replay(run_copy)
    assert _codes(report, "projections") == {"report_unreadable", "mirror_unrenderable"}
    assert "object_missing" in _codes(report, "integrity")
    rebuilt = replay(run_copy, rebuild=True).rebuilt
    assert rebuilt is not None
    assert "cannot be rebuilt" in rebuilt["error"]
