"""A live Run is built in one place (``LiveRun.open``) and its publisher decides without appending."""

from __future__ import annotations

import atexit
from pathlib import Path

import pytest
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig
from evoledger.kernel.run.live import LiveRun
from evoledger.kernel.run.publication import FeedbackFolder, Publication, publish
from evoledger.kernel.run.setup import CreatedRun, create_run
from evoledger.kernel.session import SubmitParams
from evoledger.kernel.session.answers import SubmitAnswer
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import ArtifactRef, BulkEvicted, FeedbackPublished, SubmissionRejected
from evoledger.projections import mirror
from evoledger.projections.mirror_files import diff_mirror

BENCHMARK = BenchmarkRef(name="toy-counter", config={"max_episode_steps": 4})
_EXECUTOR: list[LocalExecutor] = []


def _executor() -> LocalExecutor:
    if not _EXECUTOR:
        _EXECUTOR.append(LocalExecutor(BENCHMARK, workers=1))
        atexit.register(_EXECUTOR[0].close)
    return _EXECUTOR[0]


def _config(cap: int) -> RunConfig:
    return RunConfig(
        benchmark=BENCHMARK,
        episode_budget=10,
        episode_pool_size=5,
        bulk_feedback_retention_bytes=cap,
        seed=3,
        validation=ValidationConfig(episodes=0),
        assessment=AssessmentConfig(episodes=0),
    )


def _created(tmp_path: Path, config: RunConfig) -> CreatedRun:
    program = tmp_path / "initial"
    program.mkdir()
    (program / "policy.py").write_text(
        "def make_policy(context):\n    class P:\n        def act(self, o):\n            return 0\n    return P()\n",
        encoding="utf-8",
    )
    return create_run(tmp_path / "run", config, initial_program=program)


def _open(created: CreatedRun, config: RunConfig) -> LiveRun:
    return LiveRun.open(
        ledger=created.ledger,
        layout=created.layout,
        config=config,
        benchmark=created.benchmark,
        plan=created.plan,
        executor=_executor(),
    )


def _published(n: int, digest: str, size: int) -> FeedbackPublished:
    bulk = ArtifactRef(name="trace", media_type="text/plain", digest=digest, size=size, retention="bulk")
    return FeedbackPublished(
        submission_id=f"submission-{n:06d}",
        score=None,
        content_digest=digest_of(b"content"),
        artifacts=(bulk,),
        budget_used=n,
        budget_left=0,
    )


def test_publish_returns_the_eviction_for_the_host_to_append_and_changes_nothing_in_place() -> None:
    first, second = _published(1, digest_of(b"a"), 100), _published(2, digest_of(b"b"), 100)
    before = Publication()
    after, evictions = publish(before, [first, second], cap=300)  # 2 x 200 counted bytes
    assert before == Publication()
    assert [type(e) for e in evictions] == [BulkEvicted]
    assert evictions[0].digests == (digest_of(b"a"),)
    assert after.retention.bulk_bytes == 400  # the decision is not folded until the Host appends it
    folded, more = publish(after, evictions, cap=300)
    assert more == ()
    assert folded.retention.bulk_bytes == 200
    rejected = SubmissionRejected(code="invalid_request", message="m", retryable=False, request={})
    assert publish(after, [rejected], cap=300)[1] == ()  # only a publication can call for an eviction


def test_an_accepted_submit_refreshes_the_feedback_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(cap=10**6)
    created = _created(tmp_path, config)
    calls: list[int] = []
    refresh = FeedbackFolder.refresh

    def counted(self: FeedbackFolder, shown: mirror.MirrorState) -> None:
        calls.append(shown.events)
        refresh(self, shown)

    monkeypatch.setattr(FeedbackFolder, "refresh", counted)
    with created.ledger:
        live = _open(created, config)
        calls.clear()
        answer = live.host.handle("submit", SubmitParams(program="program", episodes="0:2"))
        assert isinstance(answer, SubmitAnswer)
        assert answer.submission_id == "submission-000001"
        assert len(calls) == 1
        assert (created.layout.workspace / answer.feedback).is_file()  # written before the answer


def test_opening_a_run_records_the_eviction_its_log_calls_for_then_evicts_and_syncs(tmp_path: Path) -> None:
    generous = _config(cap=10**6)
    created = _created(tmp_path, generous)
    with created.ledger as ledger:
        live = _open(created, generous)
        for selector in ("0:2", "2:4"):
            live.host.handle("submit", SubmitParams(program="program", episodes=selector))
        assert not list(ledger.records(kinds=["bulk-evicted"]))
        bulk = [a.digest for a in live.host.publication.retention.retained()]
        assert [ledger.objects.has(d) for d in bulk] == [True, True]

        tight = _config(cap=0)  # as after a crash between feedback-published and its retention decision
        reopened = _open(created, tight)
        *_, last = ledger.records()
        assert last.kind == "bulk-evicted"
        assert [ledger.objects.has(d) for d in bulk] == [False, True]  # the newest Submission is kept
        fresh = mirror.fold((r.stored.visibility, r.event) for r in ledger.events())
        assert reopened.host.publication.mirror.files == fresh.files
        assert diff_mirror(fresh, created.layout.feedback, ledger.objects) == []
        again = _open(created, tight)
        assert [r.kind for r in ledger.records()][-1] == "bulk-evicted"  # nothing more to decide
        assert again.host.state == reopened.host.state
