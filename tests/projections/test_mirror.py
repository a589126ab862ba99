"""The Agent mirror: its fold over public Events, rendering, syncing a folder and diffing it."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import EncodingError, InputError, IntegrityError, ObjectEvictedError
from evoledger.ledger.events import (
    REQUEST_PREFIX_CHARS,
    ArtifactRef,
    AssessmentFinished,
    BenchmarkIdentity,
    BulkEvicted,
    EpisodeFailure,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    RunCreated,
    SubmissionAccepted,
    SubmissionRejected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.store import Ledger
from evoledger.projections.mirror import (
    LATEST_PATH,
    MAX_LISTED_REJECTIONS,
    REJECTIONS_PATH,
    RETENTION_PATH,
    RETENTION_RULE,
    InlineFile,
    JsonFile,
    MirrorBuilder,
    MirrorState,
    ObjectFile,
    apply,
    fold,
)
from evoledger.projections.mirror_files import Difference, diff_mirror, pretty_json, render_file, sync_mirror
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map

EXAMPLES = settings(max_examples=30, deadline=None)
S1, S2, S3 = "submission-000001", "submission-000002", "submission-000003"


class DictObjects:
    """An ObjectSource over a dict that records every fetch (the protocol seam, not the store)."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs
        self.fetched: list[str] = []

    def get(self, digest: str) -> bytes:
        self.fetched.append(digest)
        return self.blobs[digest]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger.create(tmp_path / "run") as opened:
        yield opened


def _accepted(sid: str, episodes: list[int], program: str, used: int = 1) -> SubmissionAccepted:
    return SubmissionAccepted(
        submission_id=sid,
        program_digest=program,
        episodes=tuple(episodes),
        budget_before=100,
        budget_after=100 - len(episodes),
        submissions_used=used,
    )


def _finished(
    sid: str | None,
    index: int,
    trajectory: str,
    *,
    failure: EpisodeFailure | None = None,
    log: str | None = None,
    evaluation_id: str | None = None,
) -> EpisodeFinished:
    return EpisodeFinished(
        submission_id=sid,
        evaluation_id=evaluation_id,
        split="train",
        index=index,
        status="ok" if failure is None else failure.code,
        episode_return=float(index) + 0.5,
        steps=10 + index,
        terminated=True,
        truncated=False,
        trajectory_digest=trajectory,
        policy_log_digest=log,
        failure=failure,
        duration_ms=3,
    )


def _artifact(name: str, digest: str, size: int, retention: str = "bulk") -> ArtifactRef:
    return ArtifactRef(name=name, media_type="text/plain", digest=digest, size=size, retention=retention)  # type: ignore[arg-type]


class Run:
    """A small Run's public and host Events, with their Objects stored in a real Ledger."""

    def __init__(self, ledger: Ledger | None) -> None:
        put = ledger.objects.put if ledger is not None else digest_of  # digests alone suffice for pure folds
        self.program = put(b"program manifest")
        self.trajectory = put(b"trajectory")
        self.traceback = put(b"Traceback (most recent call last):\nValueError: boom\n")
        self.policy_log = put(b"hello from print()\n")
        self.content1 = put(canonical_json({"summary": "first", "mean": 1.5}))
        self.content2 = put(canonical_json({"summary": "second"}))
        self.bulk1 = put(b"bulk one" * 10)
        self.bulk2 = put(b"bulk two" * 10)
        self.plot = put(b"permanent plot")
        failure = EpisodeFailure(code="exception", message="ValueError: boom", traceback_digest=self.traceback)
        hidden = EpisodeFailure(code="exception", message="SECRET validation failure", traceback_digest=self.plot)
        bench = BenchmarkIdentity.of("cartpole", {})
        self.public: list[EventBase] = [
            _accepted(S1, [0, 1, 2], self.program),
            EpisodeStarted(submission_id=S1, split="train", index=0),
            _finished(S1, 0, self.trajectory),
            _finished(S1, 1, self.trajectory, failure=failure, log=self.policy_log),
            InfraFault(submission_id=S1, split="train", indices=(2,), refunded_units=1, reason="env crashed"),
            FeedbackPublished(
                submission_id=S1,
                score=0.25,
                content_digest=self.content1,
                budget_used=2,
                budget_left=98,
                artifacts=(
                    _artifact("traces/ep0.jsonl", self.bulk1, 80),
                    _artifact("plot.txt", self.plot, 14, "permanent"),
                ),
            ),
            SubmissionRejected(code="bad_range", message="0:0 is empty", retryable=True, request={"episodes": "0:0"}),
            _accepted(S2, [3, 4], self.program, used=2),
            _finished(S2, 3, self.trajectory),
            _finished(S2, 4, self.trajectory),
            FeedbackPublished(
                submission_id=S2,
                score=None,
                content_digest=self.content2,
                budget_used=4,
                budget_left=96,
                artifacts=(_artifact("traces/ep0.jsonl", self.bulk2, 80),),
            ),
            _finished(None, 7, self.trajectory, failure=failure, log=self.policy_log, evaluation_id="evaluation-1"),
            BulkEvicted(digests=(self.bulk1,), submission_ids=(S1,), reason="over the cap", bytes_freed=160),
            FinishRejected(code="budget_left", message="budget remains", retryable=True),
            FinishAccepted(candidates=(S2, S1), budget_left=96),
        ]
        self.host: list[EventBase] = [
            RunCreated(
                run_id="r",
                benchmark=bench,
                episode_budget=100,
                max_submissions=9,
                pool_commitment=self.program,
                seed=7,
                created_by="test",
            ),
            EpisodePlanned(split="train", index=0, env_seed=1, policy_seed=2),
            ValidationEpisodeFinished(
                submission_id=S1,
                program_digest=self.program,
                index=0,
                status="exception",
                episode_return=-9.0,
                steps=1,
                terminated=True,
                truncated=False,
                trajectory_digest=self.trajectory,
                failure=hidden,
                policy_log_digest=self.bulk2,
                duration_ms=1,
            ),
            AssessmentFinished(
                submission_id=S1,
                program_digest=self.program,
                score=123.0,
                episode_count=1,
                episodes=(
                    EpisodeSummary(
                        index=0, status="ok", episode_return=123.0, steps=5, trajectory_digest=self.trajectory
                    ),
                ),
            ),
        ]

    def interleaved(self) -> list[EventBase]:
        out: list[EventBase] = list(self.host[:2])
        for i, event in enumerate(self.public):
            out.append(event)
            if i == 5:
                out.extend(self.host[2:])
        return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _json(root: Path, rel: str) -> Any:
    return json.loads((root / rel).read_bytes())


# -- the fold and the documents -------------------------------------------------------------------------


def test_feedback_document_is_rendered_exactly(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public[:6])
    target = tmp_path / "feedback"
    sync_mirror(state, target, ledger.objects)
    raw = (target / S1 / "feedback.json").read_bytes()
    doc = json.loads(raw)
    assert doc == {
        "submission_id": S1,
        "score": 0.25,
        "content": {"summary": "first", "mean": 1.5},
        "episodes": [
            {"index": 0, "status": "ok", "return": 0.5, "steps": 10, "failure": None},
            {
                "index": 1,
                "status": "exception",
                "return": 1.5,
                "steps": 11,
                "failure": {"code": "exception", "message": "ValueError: boom"},
            },
        ],
        "infra_faults": [2],
        "budget_used": 2,
        "budget_left": 98,
        "program_digest": run.program,
        "artifacts": [
            {
                "name": "traces/ep0.jsonl",
                "media_type": "text/plain",
                "digest": run.bulk1,
                "size": 80,
                "retention": "bulk",
                "evicted": False,
            },
            {
                "name": "plot.txt",
                "media_type": "text/plain",
                "digest": run.plot,
                "size": 14,
                "retention": "permanent",
                "evicted": False,
            },
        ],
    }
    assert raw == pretty_json(doc)
    assert raw.endswith(b"}\n")
    assert raw.startswith(b'{\n  "artifacts": [')
    assert (target / LATEST_PATH).read_bytes() == raw


def test_tracebacks_and_policy_logs_only_for_failed_episodes(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public[:6])
    sync_mirror(state, tmp_path, ledger.objects)
    assert (tmp_path / S1 / "tracebacks" / "episode-1.txt").read_bytes() == ledger.objects.get(run.traceback)
    assert (tmp_path / S1 / "policy-logs" / "episode-1.txt").read_bytes() == b"hello from print()\n"
    assert sorted(_tree(tmp_path)) == sorted(
        [
            LATEST_PATH,
            REJECTIONS_PATH,
            RETENTION_PATH,
            f"{S1}/feedback.json",
            f"{S1}/artifacts/traces/ep0.jsonl",
            f"{S1}/artifacts/plot.txt",
            f"{S1}/tracebacks/episode-1.txt",
            f"{S1}/policy-logs/episode-1.txt",
        ]
    )


def test_nothing_of_a_submission_appears_before_its_feedback_is_published(ledger: Ledger) -> None:
    run = Run(ledger)
    state = fold(run.public[:5])
    assert set(state.files.keys()) == {REJECTIONS_PATH, RETENTION_PATH}
    assert state.latest is None


def test_latest_follows_the_latest_publication(ledger: Ledger) -> None:
    run = Run(ledger)
    state = fold(run.public[:11])
    assert state.latest == S2
    assert state.files[LATEST_PATH] == state.files[f"{S2}/feedback.json"]


def test_eviction_removes_the_file_and_marks_the_artifact(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    ledger.objects.evict(run.bulk1)  # the Host evicts in the store; the mirror must never fetch it
    with pytest.raises(ObjectEvictedError):
        ledger.objects.get(run.bulk1)
    state = fold(run.public)
    report = sync_mirror(state, tmp_path, ledger.objects)
    assert not (tmp_path / S1 / "artifacts" / "traces").exists()
    assert (tmp_path / S1 / "artifacts" / "plot.txt").read_bytes() == b"permanent plot"
    artifacts = _json(tmp_path, f"{S1}/feedback.json")["artifacts"]
    assert [(a["name"], a["evicted"]) for a in artifacts] == [("traces/ep0.jsonl", True), ("plot.txt", False)]
    assert (tmp_path / S2 / "artifacts" / "traces" / "ep0.jsonl").exists()
    assert _json(tmp_path, RETENTION_PATH) == {
        "rule": RETENTION_RULE,
        "bytes_freed": 160,
        "evictions": [{"digests": [run.bulk1], "submission_ids": [S1], "bytes_freed": 160, "reason": "over the cap"}],
    }
    assert f"{S1}/artifacts/traces/ep0.jsonl" not in report.written


def test_an_evicted_digest_published_again_is_mirrored_again(ledger: Ledger) -> None:
    run = Run(ledger)
    again = FeedbackPublished(
        submission_id=S3,
        score=1.0,
        content_digest=run.content2,
        budget_used=5,
        budget_left=95,
        artifacts=(_artifact("same.bin", run.bulk1, 80),),
    )
    state = fold([*run.public, _accepted(S3, [5], run.program, used=3), again])
    assert state.files[f"{S3}/artifacts/same.bin"] == ObjectFile(run.bulk1)
    assert f"{S1}/artifacts/traces/ep0.jsonl" not in state.files
    evict = BulkEvicted(digests=(run.bulk1,), submission_ids=(S3,), reason="again", bytes_freed=160)
    assert f"{S3}/artifacts/same.bin" not in apply(state, evict).files


def test_rejections_are_listed_in_order(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    sync_mirror(fold(run.public), tmp_path, ledger.objects)
    assert _json(tmp_path, REJECTIONS_PATH) == {
        "rejections": [
            {
                "kind": "submission-rejected",
                "code": "bad_range",
                "message": "0:0 is empty",
                "retryable": True,
                "request": {"episodes": "0:0"},
            },
            {"kind": "finish-rejected", "code": "budget_left", "message": "budget remains", "retryable": True},
        ]
    }


def test_evaluation_episodes_are_ignored(ledger: Ledger) -> None:
    run = Run(ledger)
    evaluation_event = run.public[11]
    assert isinstance(evaluation_event, EpisodeFinished)
    assert evaluation_event.evaluation_id is not None
    before = fold(run.public[:11])
    after = apply(before, evaluation_event)
    assert after.files == before.files
    assert after.submissions == before.submissions


def test_conflicting_artifact_names_keep_the_first_in_name_order(ledger: Ledger) -> None:
    run = Run(ledger)
    published = FeedbackPublished(
        submission_id=S1,
        score=None,
        content_digest=run.content1,
        budget_used=1,
        budget_left=99,
        artifacts=(_artifact("a/b", run.bulk2, 80), _artifact("a", run.bulk1, 80), _artifact("c", run.plot, 14)),
    )
    state = fold([_accepted(S1, [0], run.program), published])
    assert {p for p in state.files if "/artifacts/" in p} == {f"{S1}/artifacts/a", f"{S1}/artifacts/c"}


# -- host Events never reach a file ---------------------------------------------------------------------


def test_host_events_change_nothing(ledger: Ledger) -> None:
    run = Run(ledger)
    assert fold(run.interleaved()) == fold(run.public)
    rendered = repr(fold(run.interleaved()).files)
    assert "SECRET" not in rendered
    assert all(
        isinstance(apply(MirrorState(), e), MirrorState) and apply(MirrorState(), e) == MirrorState() for e in run.host
    )


def test_a_public_event_stored_as_host_is_ignored(ledger: Ledger) -> None:
    run = Run(ledger)
    state = fold(run.public[:5])
    published = run.public[5]
    assert apply(state, published, "host") == state
    assert apply(state, published, "public") != state
    assert fold([("public", e) for e in run.public[:5]] + [("host", published)]) == state


def test_folding_stored_rows_matches_folding_events(ledger: Ledger) -> None:
    run = Run(ledger)
    ledger.append(run.interleaved())
    from_rows = fold((r.stored.visibility, r.event) for r in ledger.events())
    assert from_rows == fold(run.public)
    assert from_rows.events == len(run.public)


@given(st.lists(st.integers(min_value=0, max_value=3), min_size=4, max_size=4), st.randoms(use_true_random=False))
@EXAMPLES
def test_host_events_anywhere_never_change_the_mirror(counts: list[int], rnd: Any) -> None:
    run = Run(None)
    events: list[EventBase] = list(run.public)
    for host_event, count in zip(run.host, counts, strict=True):
        for _ in range(count):
            events.insert(rnd.randrange(len(events) + 1), host_event)
    assert fold(events) == fold(run.public)


def test_an_unknown_visibility_is_refused(ledger: Ledger) -> None:
    run = Run(ledger)
    with pytest.raises(InputError, match="'private'"):
        apply(MirrorState(), run.public[0], "private")  # type: ignore[arg-type]


# -- syncing and diffing --------------------------------------------------------------------------------


def test_incremental_sync_equals_a_rebuild_byte_for_byte(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    live = tmp_path / "live"
    state, previous = MirrorState(), None
    for event in run.interleaved():
        if isinstance(event, BulkEvicted):
            ledger.objects.evict_many(event.digests)  # the Host evicts with the event; later syncs must not fetch
        state = apply(state, event)
        if state is not previous:
            sync_mirror(state, live, ledger.objects, previous=previous)
            previous = state
    incremental = _tree(live)
    assert diff_mirror(state, live, ledger.objects) == []
    for path in sorted(live.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    live.rmdir()
    sync_mirror(fold(run.public), live, ledger.objects)
    assert _tree(live) == incremental
    assert f"{S1}/artifacts/traces/ep0.jsonl" not in incremental
    assert not (live / S1 / "artifacts" / "traces").exists()  # emptied folders are pruned too


def test_incremental_sync_writes_only_what_changed(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    before = fold(run.public[:12])
    sync_mirror(before, tmp_path, ledger.objects)
    after = apply(before, run.public[12])  # the eviction
    report = sync_mirror(after, tmp_path, ledger.objects, previous=before)
    assert report.deleted == (f"{S1}/artifacts/traces/ep0.jsonl",)
    assert report.written == (RETENTION_PATH, f"{S1}/feedback.json")
    assert report.unchanged == len(after.files) - 2
    assert report.bytes_written == sum(len((tmp_path / p).read_bytes()) for p in report.written)
    assert sync_mirror(after, tmp_path, ledger.objects, previous=after).written == ()


def test_a_full_sync_leaves_matching_files_alone_and_removes_strays(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public)
    objects = DictObjects(
        {
            d: ledger.objects.get(d)
            for d in (run.content1, run.content2, run.bulk2, run.plot, run.traceback, run.policy_log)
        }
    )
    sync_mirror(state, tmp_path, objects)
    (tmp_path / "stray" / "deep").mkdir(parents=True)
    (tmp_path / "stray" / "deep" / "x.txt").write_text("x")
    (tmp_path / RETENTION_PATH).write_text("tampered")
    objects.fetched.clear()
    report = sync_mirror(state, tmp_path, objects)
    assert report.written == (RETENTION_PATH,)
    assert report.deleted == ("stray/deep/x.txt",)
    assert not (tmp_path / "stray").exists()
    assert run.bulk2 not in objects.fetched  # Object files are checked by digest, not fetched
    assert diff_mirror(state, tmp_path, objects) == []


def test_diff_lists_missing_extra_and_changed_files(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public[:6])
    assert {d.problem for d in diff_mirror(state, tmp_path / "absent", ledger.objects)} == {"missing"}
    sync_mirror(state, tmp_path, ledger.objects)
    (tmp_path / S1 / "feedback.json").write_bytes(b"{}\n")
    (tmp_path / S1 / "artifacts" / "plot.txt").write_bytes(b"other plot")
    (tmp_path / LATEST_PATH).unlink()
    (tmp_path / S1 / "notes.md").write_text("mine")
    assert diff_mirror(state, tmp_path, ledger.objects) == [
        Difference(LATEST_PATH, "missing"),
        Difference(f"{S1}/artifacts/plot.txt", "changed"),
        Difference(f"{S1}/feedback.json", "changed"),
        Difference(f"{S1}/notes.md", "extra"),
    ]


def test_sync_never_touches_anything_outside_the_target(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    outside = tmp_path / "outside"
    (outside / "artifacts").mkdir(parents=True)
    (outside / "artifacts" / "plot.txt").write_text("outside plot")
    (outside / "latest.json").write_text("outside latest")
    target = tmp_path / "feedback"
    target.mkdir()
    (target / S1).symlink_to(outside, target_is_directory=True)
    (target / LATEST_PATH).symlink_to(outside / "latest.json")
    state = fold(run.public[:6])
    assert Difference(S1, "extra") in diff_mirror(state, target, ledger.objects)
    sync_mirror(state, target, ledger.objects)
    assert _tree(outside) == {"artifacts/plot.txt": b"outside plot", "latest.json": b"outside latest"}
    assert not (target / S1).is_symlink()
    assert not (target / LATEST_PATH).is_symlink()
    assert diff_mirror(state, target, ledger.objects) == []
    # an incremental sync whose deletions run into a link placed by someone else does not follow it
    for child in sorted((target / S1).rglob("*"), reverse=True):
        child.unlink() if child.is_file() else child.rmdir()
    (target / S1).rmdir()
    (target / S1).symlink_to(outside, target_is_directory=True)
    evicted = apply(state, BulkEvicted(digests=(run.plot,), submission_ids=(S1,), reason="x", bytes_freed=28))
    sync_mirror(evicted, target, ledger.objects, previous=state)
    assert (outside / "artifacts" / "plot.txt").read_text() == "outside plot"


def test_a_parent_that_is_a_file_is_replaced_by_a_folder(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public[:6])
    (tmp_path / S1).write_text("in the way")
    sync_mirror(state, tmp_path, ledger.objects, previous=MirrorState())
    assert (tmp_path / S1 / "feedback.json").is_file()


def test_inline_files_are_written_as_given(tmp_path: Path) -> None:
    state = MirrorState(files=Map({"notes/readme.txt": InlineFile(b"hello\n")}))
    report = sync_mirror(state, tmp_path, DictObjects({}))
    assert report.written == ("notes/readme.txt",)
    assert (tmp_path / "notes" / "readme.txt").read_bytes() == b"hello\n"


# -- error paths ----------------------------------------------------------------------------------------


def test_a_target_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "feedback").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        sync_mirror(MirrorState(), tmp_path / "feedback", DictObjects({}))
    with pytest.raises(InputError, match="not a folder"):
        diff_mirror(MirrorState(), tmp_path / "feedback", DictObjects({}))


@pytest.mark.parametrize("bad", ["../escape.txt", "/abs.txt", "a//b", "a/./b", "", "a\\b"])
def test_unsafe_paths_in_a_hand_built_state_are_refused(tmp_path: Path, bad: str) -> None:
    state = MirrorState(files=Map({bad: InlineFile(b"x")}))
    with pytest.raises(InputError, match="normalised relative path"):
        sync_mirror(state, tmp_path / "t", DictObjects({}))
    assert not (tmp_path / "escape.txt").exists()


def test_content_that_is_not_json_is_an_integrity_error() -> None:
    digest = digest_of(b"not json")
    source = JsonFile(document=canonical_json({}), embeds=(("content", digest),))
    with pytest.raises(IntegrityError, match="not JSON"):
        render_file(source, DictObjects({digest: b"not json"}))


def test_pretty_json_refuses_non_finite_numbers() -> None:
    with pytest.raises(EncodingError, match="finite"):
        pretty_json({"x": float("nan")})


def test_a_missing_object_propagates_the_stores_error(ledger: Ledger, tmp_path: Path) -> None:
    run = Run(ledger)
    state = fold(run.public[:6])
    ledger.objects.evict(run.plot)  # evicted in the store without a bulk-evicted event: the record is inconsistent
    with pytest.raises(ObjectEvictedError):
        sync_mirror(state, tmp_path, ledger.objects)
    assert not any(p.name.endswith(".evoledger-tmp") for p in tmp_path.rglob("*"))


# -- a property: any history, synced step by step, equals a fresh rebuild -------------------------------

_BLOBS = [b"alpha" * 3, b"beta" * 5, b"gamma", b"delta" * 2]
_OBJECTS = {digest_of(b): b for b in _BLOBS} | {digest_of(canonical_json({"n": 1})): canonical_json({"n": 1})}
_DIGESTS = sorted(digest_of(b) for b in _BLOBS)
_CONTENT = digest_of(canonical_json({"n": 1}))
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("submit"), st.lists(st.sampled_from([None, "exception", "timeout"]), min_size=1, max_size=3)),
        st.tuples(
            st.just("publish"),
            st.lists(
                st.tuples(st.sampled_from(["a", "b/c", "d.txt"]), st.sampled_from(_DIGESTS), st.booleans()), max_size=3
            ),
        ),
        st.tuples(st.just("evict"), st.lists(st.sampled_from(_DIGESTS), min_size=1, max_size=2, unique=True)),
        st.tuples(st.just("reject"), st.booleans()),
    ),
    max_size=12,
)


def _history(ops: list[tuple[str, Any]]) -> list[EventBase]:
    events: list[EventBase] = []
    subs: list[str] = []
    program, log = _DIGESTS[0], _DIGESTS[1]
    for op, arg in ops:
        if op == "submit":
            sid = f"submission-{len(subs) + 1:06d}"
            subs.append(sid)
            events.append(_accepted(sid, list(range(len(arg))), program, used=len(subs)))
            for i, code in enumerate(arg):
                failure = None if code is None else EpisodeFailure(code=code, message="m", traceback_digest=_DIGESTS[2])
                events.append(_finished(sid, i, _DIGESTS[3], failure=failure, log=log if failure else None))
        elif op == "publish" and subs:
            arts = {name: _artifact(name, d, 1, "permanent" if perm else "bulk") for name, d, perm in arg}
            events.append(
                FeedbackPublished(
                    submission_id=subs[-1],
                    score=1.0,
                    content_digest=_CONTENT,
                    budget_used=1,
                    budget_left=1,
                    artifacts=tuple(arts.values()),
                )
            )
        elif op == "evict":
            events.append(BulkEvicted(digests=tuple(arg), submission_ids=tuple(subs[:1]), reason="r", bytes_freed=2))
        elif op == "reject":
            events.append(SubmissionRejected(code="c", message="m", retryable=arg))
    return events


@given(_ops)
@EXAMPLES
def test_any_history_synced_step_by_step_equals_a_rebuild(ops: list[tuple[str, Any]]) -> None:
    events = _history(ops)
    objects = DictObjects(_OBJECTS)
    with tempfile.TemporaryDirectory() as tmp:
        live, fresh = Path(tmp) / "live", Path(tmp) / "fresh"
        state = previous = MirrorState()
        sync_mirror(state, live, objects)
        for event in events:
            state = apply(state, event)
            sync_mirror(state, live, objects, previous=previous)
            previous = state
        sync_mirror(fold(events), fresh, objects)
        assert _tree(live) == _tree(fresh)
        assert diff_mirror(state, live, objects) == []
        assert sorted(_tree(fresh)) == sorted(state.files.keys())
        assert not any(name.endswith(".evoledger-tmp") for _, _, names in os.walk(live) for name in names)


def test_rejections_json_stays_bounded_whatever_the_log_holds(tmp_path: Path) -> None:
    """Refusals recorded in full by an older Host (megabyte requests and messages) still give a small file."""
    huge: dict[str, Any] = {"program": "program", "episodes": "0," * 100_000}
    events: list[Any] = []
    for n in range(250):
        if n % 2:
            events.append(FinishRejected(code="unknown_submission", message=f"{n}:" + "m" * 60_000, retryable=False))
        else:
            events.append(
                SubmissionRejected(code="invalid_request", message="x" * 60_000, retryable=False, request=huge)
            )
    state = fold(events)
    builder = MirrorBuilder()
    for event in events:
        builder.add(event)
    assert builder.build().files[REJECTIONS_PATH] == state.files[REJECTIONS_PATH]
    sync_mirror(state, tmp_path, DictObjects({}))
    assert (tmp_path / REJECTIONS_PATH).stat().st_size < 200_000
    listed = _json(tmp_path, REJECTIONS_PATH)
    assert listed["omitted"] == 150
    assert len(listed["rejections"]) == MAX_LISTED_REJECTIONS
    assert listed["rejections"][-1]["message"].startswith("249:")  # the latest are kept
    assert all(len(r["message"]) <= 1024 for r in listed["rejections"])
    request = listed["rejections"][0]["request"]
    assert request["request_hash"] == digest_of(canonical_json(huge))
    assert request["request_bytes"] == len(canonical_json(huge))
    assert len(request["request_prefix"]) == REQUEST_PREFIX_CHARS
