"""Forged headline scores in a real Run, re-chained so integrity holds: replay recomputes every aggregate.

Each test rewrites one aggregate the way an attacker would -- the Event re-chained with the head manifest,
``host/report.json`` and the Agent mirror made to agree -- and runs the real ``evoledger replay``, which
must exit non-zero with a finding naming the Event (or the report), the recorded and the recomputed value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

from evoledger.kernel.replay import replay

Cli = Callable[..., CompletedProcess[str]]
FORGED = 490.0


def _edit_report(run_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = run_dir / "host" / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    edit(report)
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _rebuild_mirror(run_dir: Path) -> None:
    """What a careful forger does last: regenerate ``workspace/feedback/`` from the forged log."""
    replay(run_dir, rebuild=True, parallel=False)


def _audit(cli: Cli, run_dir: Path, *options: str) -> dict[str, Any]:
    done = cli("replay", str(run_dir), "--json", *options)
    report: dict[str, Any] = json.loads(done.stdout)
    report["exit_code"] = done.returncode
    return report


def _findings(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    found = next(c for c in report["checks"] if c["name"] == check)["findings"]
    return [f for f in found if f["severity"] == "error"]


def _finding(report: dict[str, Any], check: str, code: str, seq: int | None = None) -> dict[str, Any]:
    matches = [f for f in _findings(report, check) if f["code"] == code and (seq is None or f["seq"] == seq)]
    assert matches, f"no {code} finding at seq {seq} in {check}: {json.dumps(report['checks'], indent=1)[:4000]}"
    return matches[0]


def test_the_unforged_run_replays_clean_with_every_aggregate_recomputed(run_copy: Path, replay_cli: Cli) -> None:
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 0, json.dumps(report["first_failure"])
    notes = [f["message"] for c in report["checks"] for f in c["findings"]]
    assert not any("not recomputed" in note for note in notes)


def test_a_forged_public_feedback_score_is_found(run_copy: Path, tamper, replay_cli: Cli) -> None:
    seq = tamper.seq_of(run_copy, "feedback-published", 0)
    honest = tamper.payload(run_copy, seq)["score"]
    tamper.forge(run_copy, seq, lambda d: d.update(score=FORGED))
    _edit_report(run_copy, lambda r: r["submissions"][0].update(score=FORGED))
    _rebuild_mirror(run_copy)
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    message = _finding(report, "protocol", "feedback_score", seq)["message"]
    assert f"recorded as {FORGED!r}" in message
    assert f"give {honest!r}" in message
    assert "submissions[0].score" in _finding(report, "projections", "report_score")["message"]
    forked, serial = replay(run_copy, parallel=True), replay(run_copy, parallel=False)
    assert [c.findings for c in forked.checks] == [c.findings for c in serial.checks]  # the side process agrees


def test_a_forged_validation_score_is_found(run_copy: Path, tamper, replay_cli: Cli) -> None:
    seq = tamper.seq_of(run_copy, "candidate-selected")
    selected = tamper.payload(run_copy, seq)["submission_id"]

    def raise_selected(d: dict[str, Any]) -> None:
        next(s for s in d["scores"] if s["submission_id"] == selected)["score"] = 2 * FORGED

    tamper.forge(run_copy, seq, raise_selected)
    _edit_report(run_copy, lambda r: r["validation"][0].update(score=2 * FORGED))
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    message = _finding(report, "protocol", "validation_score", seq)["message"]
    assert selected in message
    assert f"recorded as {2 * FORGED!r}" in message
    assert "validation[0].score" in _finding(report, "projections", "report_score")["message"]


def test_a_forged_selection_with_scores_to_match_is_found(run_copy: Path, tamper, replay_cli: Cli) -> None:
    seq = tamper.seq_of(run_copy, "candidate-selected")
    chosen = tamper.payload(run_copy, seq)
    loser = min(chosen["scores"], key=lambda s: s["score"])
    assert loser["submission_id"] != chosen["submission_id"]

    def select_the_loser(d: dict[str, Any]) -> None:
        d.update(submission_id=loser["submission_id"], program_digest=loser["program_digest"])
        next(s for s in d["scores"] if s["submission_id"] == loser["submission_id"])["score"] = 2 * FORGED

    tamper.forge(run_copy, seq, select_the_loser)
    moved = {"submission_id": loser["submission_id"], "program_digest": loser["program_digest"]}
    tamper.forge(run_copy, tamper.seq_of(run_copy, "assessment-finished"), lambda d: d.update(moved))
    end = tamper.seq_of(run_copy, "run-ended")
    tamper.forge(run_copy, end, lambda d: d.update(selected_submission_id=loser["submission_id"]))

    def report_the_loser(r: dict[str, Any]) -> None:
        r["selected"] = loser["submission_id"]
        entry = next(v for v in r["validation"] if v["submission_id"] == loser["submission_id"])
        entry["score"] = 2 * FORGED
        r["validation"] = [entry, *(v for v in r["validation"] if v is not entry)]

    _edit_report(run_copy, report_the_loser)
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    _finding(report, "protocol", "validation_score", seq)
    message = _finding(report, "protocol", "selection_recomputed", seq)["message"]
    assert f"the selection is {chosen['submission_id']}" in message


def test_a_forged_assessment_score_is_found_with_the_summary_and_report_that_repeat_it(
    run_copy: Path, tamper, replay_cli: Cli
) -> None:
    seq = tamper.seq_of(run_copy, "assessment-finished")
    honest = tamper.payload(run_copy, seq)["score"]
    tamper.forge(run_copy, seq, lambda d: d.update(score=FORGED))
    end = tamper.seq_of(run_copy, "run-ended")
    tamper.forge(run_copy, end, lambda d: d["summary"].update(assessment_score=FORGED))
    _edit_report(run_copy, lambda r: r.update(assessment_score=FORGED))
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    assert f"give {honest!r}" in _finding(report, "protocol", "assessment_score", seq)["message"]
    _finding(report, "protocol", "end_summary", end)
    assert "assessment_score" in _finding(report, "projections", "report_score")["message"]


def test_a_forged_run_ended_summary_is_found(run_copy: Path, tamper, replay_cli: Cli) -> None:
    end = tamper.seq_of(run_copy, "run-ended")
    honest = tamper.payload(run_copy, end)["summary"]

    def forge_summary(d: dict[str, Any]) -> None:
        d["summary"].update(assessment_score=FORGED, submissions=honest["submissions"] + 5, candidates=[])

    tamper.forge(run_copy, end, forge_summary)
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    messages = [f["message"] for f in _findings(report, "protocol") if f["code"] == "end_summary" and f["seq"] == end]
    assert len(messages) == 3, messages
    assert any(f"give {honest['assessment_score']!r}" in m for m in messages)


def test_a_forged_host_report_is_found_against_the_recomputed_scores(run_copy: Path, replay_cli: Cli) -> None:
    def forge(r: dict[str, Any]) -> None:
        r["assessment_score"] = FORGED
        r["submissions"][1]["score"] = FORGED

    _edit_report(run_copy, forge)
    report = _audit(replay_cli, run_copy)
    assert report["exit_code"] == 3
    messages = [f["message"] for f in _findings(report, "projections") if f["code"] == "report_score"]
    assert len(messages) == 2, messages
    assert all(f"= {FORGED!r}" in m for m in messages)


def test_every_aggregate_forged_fails_replay_execute_although_every_episode_reproduces(
    run_copy: Path, tamper, replay_cli: Cli
) -> None:
    """The reported attack: every headline score raised to ~490 while the recorded Episodes stay as they ran."""
    published = [s for s, kind, _, _ in tamper.rows(run_copy) if kind == "feedback-published"]
    for n, seq in enumerate(published):
        tamper.forge(run_copy, seq, lambda d, n=n: d.update(score=FORGED + n))
    selection = tamper.seq_of(run_copy, "candidate-selected")

    def raise_all(d: dict[str, Any]) -> None:
        for n, s in enumerate(d["scores"]):
            s["score"] = FORGED + 10 - n  # the selected (first) stays the best
        assert d["scores"][0]["submission_id"] == d["submission_id"]

    tamper.forge(run_copy, selection, raise_all)
    assessment = tamper.seq_of(run_copy, "assessment-finished")
    tamper.forge(run_copy, assessment, lambda d: d.update(score=FORGED))
    end = tamper.seq_of(run_copy, "run-ended")
    tamper.forge(run_copy, end, lambda d: d["summary"].update(assessment_score=FORGED))

    def forge_report(r: dict[str, Any]) -> None:
        r["assessment_score"] = FORGED
        for n, entry in enumerate(r["submissions"]):
            entry["score"] = FORGED + n
        for n, entry in enumerate(r["validation"]):
            entry["score"] = FORGED + 10 - n

    _edit_report(run_copy, forge_report)
    _rebuild_mirror(run_copy)
    report = _audit(replay_cli, run_copy, "--execute")
    assert report["exit_code"] == 3
    checks = {c["name"]: c["status"] for c in report["checks"]}
    assert checks == {"integrity": "pass", "protocol": "fail", "projections": "fail", "execution": "pass"}
    codes = [(f["code"], f["seq"]) for f in _findings(report, "protocol")]
    assert sorted(codes) == sorted(
        [
            *(("feedback_score", seq) for seq in published),
            *(("validation_score", selection) for _ in range(3)),
            ("assessment_score", assessment),
            ("end_summary", end),
        ]
    )
    reported = [f for f in _findings(report, "projections") if f["code"] == "report_score"]
    assert len(reported) == len(published) + 3 + 1


def test_forged_episodes_that_carry_a_forged_score_pass_the_log_audit_but_not_replay_execute(
    run_copy: Path, tamper, replay_cli: Cli
) -> None:
    """Forging the Episodes too makes the record consistent: only re-running them shows they are not what ran."""
    selection = tamper.seq_of(run_copy, "candidate-selected")
    selected = tamper.payload(run_copy, selection)["submission_id"]
    episodes = [
        s
        for s, kind, _, payload in tamper.rows(run_copy)
        if kind == "validation-episode-finished" and json.loads(payload)["submission_id"] == selected
    ]
    for seq in episodes:
        tamper.forge(run_copy, seq, lambda d: d.update(episode_return=2 * FORGED))

    def raise_selected(d: dict[str, Any]) -> None:
        next(s for s in d["scores"] if s["submission_id"] == selected)["score"] = 2 * FORGED

    tamper.forge(run_copy, selection, raise_selected)
    _edit_report(run_copy, lambda r: r["validation"][0].update(score=2 * FORGED))
    assert _audit(replay_cli, run_copy)["exit_code"] == 0  # the numbers follow from the (forged) Episodes
    report = _audit(replay_cli, run_copy, "--execute")
    assert report["exit_code"] == 3
    assert sorted(f["seq"] for f in _findings(report, "execution") if f["code"] == "not_reproduced") == episodes
