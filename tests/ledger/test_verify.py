"""verify(): a structured report of chain, manifest and Object damage."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.database import Database
from evoledger.ledger.errors import LedgerNotFoundError
from evoledger.ledger.objects import ObjectStore
from evoledger.ledger.records import PendingEvent
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import EVENT_COLUMNS, Problem, VerifyReport, referenced_digests, verify, verify_opened
from hypothesis import given, settings
from hypothesis import strategies as st

THRESHOLD = 2048


def ev(kind: str = "note", **payload: object) -> PendingEvent:
    return PendingEvent(kind, 1, "public", canonical_json(payload))


def build(run_dir: Path) -> dict[str, str]:
    """Six events referencing an inline, a file and an evicted Object (eviction recorded)."""
    with Ledger.create(run_dir, large_threshold=THRESHOLD) as ledger:
        small = ledger.objects.put(b"small trajectory")
        large = ledger.objects.put(bytes(range(256)) * 40)
        bulk = ledger.objects.put(b"bulk artifact")
        ledger.append_records(
            [
                ev("episode-finished", trajectory_digest=small, n=0),
                ev("feedback-published", artifact_digests=[bulk, large], n=1),
                ev("program-snapshotted", files={"policy.py": small}, n=2),
                ev("note", n=3),
            ]
        )
        with ledger.transaction():
            ledger.objects.evict(bulk)
            ledger.append_records([ev("bulk-evicted", digests=[bulk], n=4)])
        ledger.append_records([ev("note", n=5)])
    return {"small": small, "large": large, "bulk": bulk}


def _sql(run_dir: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    conn.execute(statement, params)
    conn.close()


def codes(report: VerifyReport) -> set[tuple[str, str]]:
    return {(p.check, p.code) for p in report.problems if p.severity == "error"}


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    run_dir = tmp_path / "run"
    return run_dir, build(run_dir)


def test_intact_ledger_is_ok(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    report = verify(run_dir)
    assert report.ok, report.problems
    assert report.first_problem is None
    assert report.events_checked == 6
    assert report.objects_checked == 3
    assert report.log_head == report.manifest_head
    assert report.log_head is not None
    assert report.log_head.count == 6


def test_verify_accepts_an_open_ledger(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    with Ledger.open(run_dir, writable=True) as ledger:
        assert verify(ledger).ok
    with Ledger.open(run_dir) as ledger:
        assert verify(ledger).ok


def test_report_is_json_serialisable(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "DELETE FROM events WHERE seq = 5")
    data = json.loads(verify(run_dir).to_json())
    assert data["ok"] is False
    assert data["first_problem"]["code"] == "truncated_tail"
    assert data["events_checked"] == 5
    assert {"check", "code", "message", "seq", "digest", "severity"} <= set(data["problems"][0])


def test_flipped_payload_byte_is_a_hash_mismatch(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(
        run_dir,
        "UPDATE events SET payload = CAST(replace(CAST(payload AS TEXT), '\"n\":3', '\"n\":4') AS BLOB) WHERE seq = 3",
    )
    report = verify(run_dir)
    assert codes(report) == {("chain", "hash_mismatch")}
    assert report.first_problem is not None
    assert report.first_problem.seq == 3
    assert "payload bytes were altered" in report.first_problem.message


def test_changed_visibility_is_a_hash_mismatch(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "UPDATE events SET visibility = 'host' WHERE seq = 1")
    assert codes(verify(run_dir)) == {("chain", "hash_mismatch")}


def test_deleted_middle_event(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "DELETE FROM events WHERE seq = 3")
    report = verify(run_dir)
    assert codes(report) == {("chain", "seq_gap"), ("chain", "broken_link")}
    assert {p.seq for p in report.problems} == {4}


def test_deleted_tail_event_with_manifest_untouched(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "DELETE FROM events WHERE seq = 5")
    report = verify(run_dir)
    assert codes(report) == {("manifest", "truncated_tail")}
    assert "the last 1 event(s) were deleted" in report.problems[0].message


def test_reordered_pair(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "UPDATE events SET seq = -1 WHERE seq = 2")
    _sql(run_dir, "UPDATE events SET seq = 2 WHERE seq = 3")
    _sql(run_dir, "UPDATE events SET seq = 3 WHERE seq = -1")
    report = verify(run_dir)
    assert ("chain", "broken_link") in codes(report)
    assert {p.seq for p in report.problems if p.code == "broken_link"} >= {2, 3}


def test_replaced_tail_is_a_manifest_mismatch(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    with Ledger.open(run_dir) as ledger:
        rows = list(ledger.records())
    _sql(run_dir, "DELETE FROM events WHERE seq = 5")
    forged = ev("note", n=99)
    from evoledger.ledger.records import chain_hash

    digest = chain_hash(rows[4].hash, forged.kind, forged.version, forged.visibility, forged.payload)
    _sql(
        run_dir,
        "INSERT INTO events VALUES (5, 'note', 1, 'public', ?, ?, ?, '2024-01-01T00:00:00.000000Z')",
        forged.payload,
        rows[4].hash,
        digest,
    )
    assert codes(verify(run_dir)) == {("manifest", "manifest_mismatch")}


def test_damaged_timestamp_is_reported(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    _sql(run_dir, "UPDATE events SET recorded_at = '2024-01-01 garbage' WHERE seq = 2")
    report = verify(run_dir)
    assert codes(report) == {("chain", "timestamp_malformed")}
    assert report.problems[0].seq == 2


def test_flipped_object_byte_is_object_corrupt(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    conn = sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)
    [(blob,)] = conn.execute("SELECT data FROM objects WHERE digest = ?", (digests["small"],)).fetchall()
    damaged = bytearray(blob)
    damaged[-3] ^= 0x10
    conn.execute("UPDATE objects SET data = ? WHERE digest = ?", (bytes(damaged), digests["small"]))
    conn.close()
    report = verify(run_dir)
    assert codes(report) == {("object", "object_corrupt")}
    assert report.problems[0].digest == digests["small"]


def test_object_row_deleted_without_eviction_record(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    _sql(run_dir, "DELETE FROM objects WHERE digest = ?", digests["small"])
    report = verify(run_dir)
    assert codes(report) == {("object", "object_missing")}
    [problem] = report.problems
    assert problem.digest == digests["small"]
    assert problem.seq == 0


def test_large_object_file_deleted(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    hexpart = digests["large"][7:]
    (run_dir / "objects" / hexpart[:2] / f"{hexpart}.zst").unlink()
    assert codes(verify(run_dir)) == {("object", "object_missing")}


def test_tombstone_without_eviction_event(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    _sql(run_dir, "UPDATE objects SET location = 'evicted', data = NULL WHERE digest = ?", digests["small"])
    report = verify(run_dir)
    assert codes(report) == {("object", "object_evicted_unrecorded")}
    assert "no 'bulk-evicted' event records it" in report.problems[0].message


def test_evicted_object_whose_tombstone_was_deleted_is_fine(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    _sql(run_dir, "DELETE FROM objects WHERE digest = ?", digests["bulk"])
    assert verify(run_dir).ok  # the log itself records the eviction


def test_manifest_missing_and_malformed(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    (run_dir / "ledger.head").write_text("{oops")
    assert codes(verify(run_dir)) == {("manifest", "manifest_malformed")}
    (run_dir / "ledger.head").unlink()
    assert codes(verify(run_dir)) == {("manifest", "manifest_missing")}


def test_lagging_manifest_is_only_a_warning(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    with Ledger.open(run_dir) as ledger:
        first = next(ledger.records())
    (run_dir / "ledger.head").write_text(json.dumps({"format": "evoledger.head/1", "hash": first.hash, "count": 1}))
    report = verify(run_dir)
    assert report.ok
    assert [(p.code, p.severity) for p in report.problems] == [("manifest_behind", "warning")]
    (run_dir / "ledger.head").write_text(
        json.dumps({"format": "evoledger.head/1", "hash": "sha256:" + "5" * 64, "count": 1})
    )
    assert codes(verify(run_dir)) == {("manifest", "manifest_mismatch")}


def test_unreadable_database_is_reported_not_raised(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    (run_dir / "ledger.sqlite").write_bytes(b"\x00garbage" * 1000)
    report = verify(run_dir)
    assert not report.ok
    assert report.first_problem is not None
    assert report.first_problem.check == "database"
    assert "SQLite cannot open the ledger" in report.first_problem.message


def test_deleted_database_with_manifest_is_reported(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, _ = run
    (run_dir / "ledger.sqlite").unlink()
    assert codes(verify(run_dir)) == {("database", "database_missing")}


def test_no_ledger_at_all_raises_not_found(tmp_path: Path) -> None:
    with pytest.raises(LedgerNotFoundError, match="no ledger in"):
        verify(tmp_path / "nothing")


def test_problems_are_capped(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    with Ledger.create(run_dir) as ledger:
        ledger.append_records([ev(trajectory_digest="sha256:" + f"{i:064x}") for i in range(30)])
    report = verify(run_dir, max_problems=10)
    assert len(report.problems) == 10
    assert report.problems_omitted == 20
    assert not report.ok


def test_problem_defaults() -> None:
    problem = Problem("chain", "seq_gap", "m")
    assert (problem.seq, problem.digest, problem.severity) == (None, None, "error")


# -- reference scan: the fast regex path agrees with an exact walk (and with the schema's helper) --------
D = [f"sha256:{i:064x}" for i in range(4)]
_keys = st.sampled_from(
    [
        "digest",
        "digests",
        "x_digest",
        "a_b_digests",
        "files",
        "note",
        "hash",
        "_digest",
        "digest_",
        "my-digest",
        'q"_digest',
        "x\\_digest",
        "files_digest",
    ]
)
_leaf = st.sampled_from([*D, "sha256:short", "text sha256:" + "0" * 64, None, 1, 2.5, True])
_json = st.recursive(
    _leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3), max_leaves=10
)


def _exact(value: object) -> set[str]:
    from evoledger.ledger.events.references import payload_object_refs

    return set(payload_object_refs(value))


@settings(max_examples=300, deadline=None)
@given(_json)
def test_referenced_digests_matches_the_schema_convention(value: object) -> None:
    pytest.importorskip("evoledger.ledger.events.references")
    assert set(referenced_digests(canonical_json(value))) == _exact(value)


def test_referenced_digests_examples() -> None:
    payload = canonical_json(
        {
            "trajectory_digest": D[0],
            "artifact_digests": [D[1], D[2]],
            "files": {"a.py": D[3]},
            "pool_commitment": D[0],
            "note": f"see {D[1]}",
        }
    )
    assert sorted(referenced_digests(payload)) == sorted(D)
    assert referenced_digests(canonical_json({"pool_commitment": D[0]})) == []
    assert referenced_digests(b"{}") == []


# -- verify_opened: the same report over rows (and references) the caller already read ------------------
def _opened(run_dir: Path, damage: str | None, *, with_references: bool) -> VerifyReport:
    if damage is not None:
        _sql(run_dir, damage)
    db = Database.open(run_dir / "ledger.sqlite", writable=False)
    try:
        rows = db.conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq").fetchall()
        references = {r[0]: referenced_digests(r[4]) for r in rows} if with_references else None
        return verify_opened(run_dir, db, ObjectStore(db, run_dir / "objects"), rows, references=references)
    finally:
        db.close()


@pytest.mark.parametrize(
    "damage",
    [
        None,
        "DELETE FROM events WHERE seq = 2",
        "UPDATE events SET payload = CAST('{}' AS BLOB) WHERE seq = 1",
        "UPDATE events SET recorded_at = 'yesterday' WHERE seq = 3",
        "DELETE FROM objects WHERE location = 'inline'",
    ],
)
@pytest.mark.parametrize("with_references", [False, True])
def test_verify_opened_over_read_rows_reports_what_verify_reports(
    run: tuple[Path, dict[str, str]], damage: str | None, with_references: bool
) -> None:
    run_dir, _ = run
    opened = _opened(run_dir, damage, with_references=with_references)
    assert opened == verify(run_dir)
    assert opened.ok == (damage is None)


def test_known_references_replace_the_payload_scan(run: tuple[Path, dict[str, str]]) -> None:
    run_dir, digests = run
    db = Database.open(run_dir / "ledger.sqlite", writable=False)
    try:
        rows = db.conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq").fetchall()
        missing = "sha256:" + "0" * 64  # the caller vouches that event 0 references it: verify believes it
        report = verify_opened(run_dir, db, ObjectStore(db, run_dir / "objects"), rows, references={0: [missing]})
    finally:
        db.close()
    assert [(p.code, p.digest, p.seq) for p in report.problems] == [("object_missing", missing, 0)]
    assert digests["small"] not in {p.digest for p in report.problems}


@settings(max_examples=200, deadline=None)
@given(_json, st.sampled_from(["indented", "escaped", "spaced"]))
def test_referenced_digests_of_non_canonical_payloads(value: object, style: str) -> None:
    pytest.importorskip("evoledger.ledger.events.references")
    if style == "indented":
        payload = json.dumps(value, sort_keys=True, indent=1).encode()
    elif style == "escaped":
        payload = json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("_", "\\u005f").encode()
    else:
        payload = json.dumps(value, separators=(", ", ": ")).encode()
    assert set(referenced_digests(payload)) == _exact(value)


def test_the_common_payload_takes_the_single_key_path() -> None:
    payload = canonical_json({"index": 3, "policy_log_digest": D[1], "trajectory_digest": D[0], "x": "_digest"})
    assert referenced_digests(payload) == [D[1], D[0]]
    assert referenced_digests(canonical_json({"_digest": D[0], "a_digest": D[1]})) == [D[1]]
    assert referenced_digests(b'{"a": 1,"b_digest":"' + D[2].encode() + b'"}') == [D[2]]
    assert referenced_digests(b'x"b_digest":"' + D[2].encode() + b'"') == []  # not JSON, and no key start


# -- free-form JSON is data: a digest-shaped value under a *_digest key there is not an Object reference ---
_ABSENT = "sha256:" + "a" * 64


def _free_form_ledger(run_dir: Path, *, also_referenced: bool = False) -> None:
    with Ledger.create(run_dir) as ledger:
        trajectory = ledger.objects.put(b"[]")
        events = [
            PendingEvent.encode(
                "episode-finished", 1, "public", {"trajectory_digest": trajectory, "metrics": {"map_digest": _ABSENT}}
            ),
            PendingEvent.encode("episode-planned", 1, "host", {"scenario": {"level": {"layout_digest": _ABSENT}}}),
            PendingEvent.encode(
                "evaluation-started", 1, "host", {"benchmark": {"params": {"weights_digest": _ABSENT}}}
            ),
        ]
        if also_referenced:
            events.append(PendingEvent.encode("episode-finished", 1, "public", {"trajectory_digest": _ABSENT}))
        ledger.append_records(events)


def test_digests_in_free_form_json_are_not_object_references(tmp_path: Path) -> None:
    """An Environment metric, a scenario or a Benchmark param named *_digest is data (it used to fail verify)."""
    _free_form_ledger(tmp_path / "run")
    assert verify(tmp_path / "run").ok
    assert _opened(tmp_path / "run", None, with_references=False).ok  # replay's path over rows already read


def test_a_free_form_digest_that_is_also_referenced_is_reported_at_the_reference(tmp_path: Path) -> None:
    _free_form_ledger(tmp_path / "run", also_referenced=True)
    report = verify(tmp_path / "run")
    assert [(p.code, p.digest, p.seq) for p in report.problems] == [("object_missing", _ABSENT, 3)]
    assert _opened(tmp_path / "run", None, with_references=False) == report


def test_unknown_kinds_keep_the_naming_convention(tmp_path: Path) -> None:
    with Ledger.create(tmp_path / "run") as ledger:
        ledger.append_records([ev("custom-fact", metrics={"map_digest": _ABSENT})])
    assert [(p.code, p.seq) for p in verify(tmp_path / "run").problems] == [("object_missing", 0)]
