"""Replay re-derives every planned seed from the Run's secret key, which must be recorded once and host-only.

Each test rewrites a real recorded Run and re-chains the log and its manifest, so the integrity check
still passes: only the plan check can notice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.planning import PlannedEpisode, plan_commitment
from evoledger.kernel.replay import ReplayReport, replay
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH, chain_hash

Row = tuple[str, int, str, bytes]  # kind, version, visibility, payload


def _rewrite(tamper: Any, run_dir: Path, edit: Callable[[list[Row]], list[Row]]) -> None:
    """Replace the log's rows by ``edit(rows)``, renumbered and re-chained, with a matching manifest."""
    conn = tamper.connect(run_dir)
    try:
        old = conn.execute("SELECT kind, version, visibility, payload, recorded_at FROM events ORDER BY seq").fetchall()
        stamps = [r[4] for r in old]
        rows = edit([(k, v, vis, p) for k, v, vis, p, _ in old])
        prev = GENESIS_HASH
        conn.execute("BEGIN")
        conn.execute("DELETE FROM events")
        for seq, (kind, version, visibility, payload) in enumerate(rows):
            digest = chain_hash(prev, kind, version, visibility, payload)
            conn.execute(
                "INSERT INTO events (seq, kind, version, visibility, payload, prev_hash, hash, recorded_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (seq, kind, version, visibility, payload, prev, digest, stamps[min(seq, len(stamps) - 1)]),
            )
            prev = digest
        conn.execute("COMMIT")
    finally:
        conn.close()
    HeadManifest(run_dir / MANIFEST_NAME).write(Head(prev, len(rows)))


def _protocol_codes(report: ReplayReport) -> list[str]:
    return [f.code for f in report.check("protocol").findings if f.severity == "error"]


def _recommit(rows: list[Row]) -> list[Row]:
    """Recompute run-created's pool commitment over the (edited) episode-planned Events."""
    plans = []
    for kind, _, _, payload in rows:
        if kind == "episode-planned":
            d = json.loads(payload)
            spec = EpisodeSpec(d["split"], d["index"], d["env_seed"], d["scenario"] or None)
            plans.append(PlannedEpisode(spec=spec, policy_seed=d["policy_seed"]))
    created = json.loads(rows[0][3])
    created["pool_commitment"] = plan_commitment(plans)
    return [(*rows[0][:3], canonical_json(created)), *rows[1:]]


def test_the_recorded_run_passes_and_re_derives_every_planned_seed(run_copy: Path) -> None:
    report = replay(run_copy)
    assert report.ok, report.to_json()
    codes = {f.code for f in report.check("protocol").findings}
    assert not codes & {"plan_not_rederived", "run_key_missing", "planned_seed_mismatch"}


def test_a_run_without_its_key_event_fails_replay(run_copy: Path, tamper: Any) -> None:
    _rewrite(tamper, run_copy, lambda rows: [r for r in rows if r[0] != "run-key"])
    report = replay(run_copy)
    assert report.check("integrity").status == "pass"  # re-chained: only the plan check can tell
    assert not report.ok
    assert report.first_failure is not None
    assert "run_key_missing" in _protocol_codes(report)
    finding = next(f for f in report.check("protocol").findings if f.code == "run_key_missing")
    assert "no run-key Event" in finding.message


def test_a_key_event_stored_public_fails_replay(run_copy: Path, tamper: Any) -> None:
    def publish(rows: list[Row]) -> list[Row]:
        return [(k, v, "public" if k == "run-key" else vis, p) for k, v, vis, p in rows]

    _rewrite(tamper, run_copy, publish)
    report = replay(run_copy)
    assert report.check("integrity").status == "pass"
    codes = _protocol_codes(report)
    assert "run_key_public" in codes
    finding = next(f for f in report.check("protocol").findings if f.code == "run_key_public")
    assert finding.seq == 1  # right after run-created
    assert "every Validation and Assessment Episode was predictable" in finding.message


def test_a_replaced_key_contradicts_the_seed_and_the_plan(run_copy: Path, tamper: Any) -> None:
    seq = tamper.seq_of(run_copy, "run-key")
    tamper.forge(run_copy, seq, lambda d: d.update(key="ab" * 32))
    codes = _protocol_codes(replay(run_copy))
    assert "run_key_mismatch" in codes  # the recorded Run has --seed 11, which derives another key
    assert "planned_seed_mismatch" in codes


def test_a_policy_seed_changed_with_a_matching_commitment_is_caught(run_copy: Path, tamper: Any) -> None:
    """The commitment only binds the plan to run-created; re-deriving from the key binds it to the key."""

    def change(rows: list[Row]) -> list[Row]:
        out = []
        for kind, version, visibility, payload in rows:
            d = json.loads(payload)
            if kind == "episode-planned" and (d["split"], d["index"]) == ("assessment", 1):
                d["policy_seed"] = (d["policy_seed"] + 1) % 2**64
                payload = canonical_json(d)
            out.append((kind, version, visibility, payload))
        return _recommit(out)

    _rewrite(tamper, run_copy, change)
    report = replay(run_copy)
    assert report.check("integrity").status == "pass"
    findings = [f for f in report.check("protocol").findings if f.severity == "error"]
    assert [f.code for f in findings] == ["planned_seed_mismatch"], report.to_json()
    assert "Policy seed planned for assessment Episode 1" in findings[0].message


def test_an_environment_seed_changed_with_a_matching_commitment_is_caught(run_copy: Path, tamper: Any) -> None:
    def change(rows: list[Row]) -> list[Row]:
        out = []
        for kind, version, visibility, payload in rows:
            d = json.loads(payload)
            if kind == "episode-planned" and (d["split"], d["index"]) == ("validation", 0):
                d["env_seed"] = 12345678901  # e.g. a seed the Agent's Program was tuned for
                payload = canonical_json(d)
            out.append((kind, version, visibility, payload))
        return _recommit(out)

    _rewrite(tamper, run_copy, change)
    findings = [f for f in replay(run_copy).check("protocol").findings if f.severity == "error"]
    assert [f.code for f in findings] == ["planned_seed_mismatch"]
    assert "Environment seed planned for validation Episode 0" in findings[0].message


def test_the_key_in_a_public_event_is_a_leak(run_copy: Path, tamper: Any) -> None:
    key = tamper.payload(run_copy, tamper.seq_of(run_copy, "run-key"))["key"]
    seq = tamper.seq_of(run_copy, "finish-accepted")
    tamper.forge(run_copy, seq, lambda d: d.update(note=f"the key is {key}"))
    leaks = [f for f in replay(run_copy).check("protocol").findings if f.code == "run_key_leaked"]
    assert [f.seq for f in leaks] == [seq]
