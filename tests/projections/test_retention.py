"""Bulk retention: the fold over publications and evictions, and the oldest-first eviction decision."""

from __future__ import annotations

from typing import Any

import pytest
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import ArtifactRef, BulkEvicted, FeedbackPublished, SubmissionRejected
from evoledger.projections.retention import (
    COPIES,
    EvictionDecision,
    RetentionState,
    apply,
    counted_bytes,
    decide,
    fold,
)
from hypothesis import given, settings
from hypothesis import strategies as st

CONTENT = digest_of(b"content")
D = [digest_of(f"blob {i}".encode()) for i in range(8)]


def _sid(n: int) -> str:
    return f"submission-{n:06d}"


def _published(n: int, *artifacts: tuple[str, int, str]) -> FeedbackPublished:
    """Feedback of Submission ``n`` with Artifacts ``(digest, size, retention)`` named a0, a1, ..."""
    refs = tuple(
        ArtifactRef(name=f"a{i}", media_type="application/octet-stream", digest=d, size=size, retention=r)  # type: ignore[arg-type]
        for i, (d, size, r) in enumerate(artifacts)
    )
    return FeedbackPublished(
        submission_id=_sid(n), score=None, content_digest=CONTENT, artifacts=refs, budget_used=n, budget_left=0
    )


def _evict_with(state: RetentionState, decision: EvictionDecision) -> RetentionState:
    event = decision.to_event()
    return state if event is None else apply(state, event)


# -- the fold -------------------------------------------------------------------------------------------


def test_bulk_bytes_count_each_retained_bulk_artifact_twice() -> None:
    state = fold([_published(1, (D[0], 100, "bulk"), (D[1], 7, "permanent"), (D[2], 10, "bulk"))])
    assert COPIES == 2
    assert state.bulk_bytes == counted_bytes(110) == 220
    assert state.submissions[_sid(1)].bulk_bytes == 220
    assert [a.name for a in state.retained()] == ["a0", "a2"]


def test_eviction_applies_by_digest_to_every_holder() -> None:
    state = fold([_published(1, (D[0], 100, "bulk")), _published(2, (D[0], 100, "bulk"), (D[1], 5, "bulk"))])
    state = apply(state, BulkEvicted(digests=(D[0],), submission_ids=(_sid(1),), reason="r", bytes_freed=400))
    assert [(a.submission_id, a.digest) for a in state.retained()] == [(_sid(2), D[1])]
    assert state.bulk_bytes == 10
    assert state.freed_bytes == 400
    assert state.evicted[D[0]] == 1


def test_a_digest_published_again_after_eviction_counts_again() -> None:
    state = fold(
        [
            _published(1, (D[0], 100, "bulk")),
            BulkEvicted(digests=(D[0],), submission_ids=(_sid(1),), reason="r", bytes_freed=200),
            _published(2, (D[0], 100, "bulk")),
        ]
    )
    assert state.bulk_bytes == 200
    assert [a.submission_id for a in state.retained()] == [_sid(2)]


def test_other_events_and_repeated_publications_change_nothing() -> None:
    state = fold([_published(1, (D[0], 100, "bulk"))])
    assert apply(state, SubmissionRejected(code="x", message="m", retryable=False)) is state
    assert apply(state, _published(1, (D[1], 999, "bulk"))) is state


# -- the decision ---------------------------------------------------------------------------------------


def test_within_the_cap_nothing_is_evicted() -> None:
    state = fold([_published(1, (D[0], 100, "bulk")), _published(2, (D[1], 100, "bulk"))])
    decision = decide(state, 400)
    assert decision == EvictionDecision((), (), 0, False, bytes_before=400, cap_bytes=400)
    assert decision.to_event() is None


def test_oldest_submissions_go_first_and_only_as_many_as_needed() -> None:
    state = fold([_published(n, (D[n], 100, "bulk")) for n in range(1, 5)])  # 4 x 200 counted bytes
    decision = decide(state, 450)
    assert decision.digests == (D[1], D[2])
    assert decision.submission_ids == (_sid(1), _sid(2))
    assert decision.bytes_freed == 400
    assert not decision.newest_alone_exceeds
    event = decision.to_event()
    assert event is not None
    assert event.bytes_freed == 400
    assert "800 bytes" in event.reason
    assert "450 bytes" in event.reason
    assert apply(state, event).bulk_bytes == 400


def test_the_newest_submission_is_never_evicted_and_is_flagged_when_alone_too_big() -> None:
    state = fold([_published(1, (D[1], 10, "bulk")), _published(2, (D[2], 1000, "bulk"))])
    decision = decide(state, 100)
    assert decision.digests == (D[1],)
    assert decision.newest_alone_exceeds
    event = decision.to_event()
    assert event is not None
    assert "newest Submission alone exceeds" in event.reason
    after = apply(state, event)
    assert decide(after, 100) == EvictionDecision((), (), 0, True, bytes_before=2000, cap_bytes=100)


def test_digests_shared_with_a_permanent_artifact_or_the_newest_are_kept() -> None:
    state = fold(
        [
            _published(1, (D[1], 100, "bulk"), (D[2], 100, "bulk"), (D[3], 100, "bulk")),
            _published(2, (D[1], 1, "permanent")),
            _published(3, (D[2], 100, "bulk")),
        ]
    )
    decision = decide(state, 0)
    assert decision.digests == (D[3],)
    assert decision.submission_ids == (_sid(1),)
    assert decision.bytes_freed == 200


def test_a_digest_shared_with_a_younger_submission_waits_for_its_turn() -> None:
    state = fold(
        [
            _published(1, (D[1], 100, "bulk"), (D[2], 100, "bulk")),
            _published(2, (D[3], 100, "bulk")),
            _published(3, (D[1], 100, "bulk")),
            _published(4, (D[4], 10, "bulk")),
        ]
    )  # counted: 400 + 200 + 200 + 20 = 820
    first = decide(state, 620)
    assert first.digests == (D[2],)  # D1 is still held by Submission 3, which is younger than 1
    assert first.submission_ids == (_sid(1),)
    everything = decide(state, 20)
    assert everything.digests == (D[2], D[3], D[1])
    assert everything.submission_ids == (_sid(1), _sid(2), _sid(3))
    assert everything.bytes_freed == 800


def test_decisions_are_deterministic() -> None:
    events = [_published(n, (D[n % 3], 50 * n, "bulk"), (D[3 + n % 2], 5, "bulk")) for n in range(1, 7)]
    assert fold(events) == fold(events)
    assert decide(fold(events), 123) == decide(fold(events), 123)


@pytest.mark.parametrize("bad", [1.5, "10", True, None])
def test_a_cap_that_is_not_an_int_is_refused(bad: Any) -> None:
    with pytest.raises(InputError, match="cap_bytes must be an int"):
        decide(RetentionState(), bad)


def test_a_negative_cap_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="bulk_feedback_retention_bytes must be >= 0, got -1"):
        decide(RetentionState(), -1)


# -- the property ---------------------------------------------------------------------------------------

_SIZES = st.lists(st.integers(min_value=0, max_value=400), min_size=len(D), max_size=len(D))
_SUBMISSION = st.lists(st.tuples(st.integers(min_value=0, max_value=len(D) - 1), st.booleans()), max_size=4)


def _pinned(state: RetentionState) -> frozenset[str]:
    newest = state.newest
    return frozenset(state.permanent.keys()) | (newest.digests if newest is not None else frozenset())


@given(sizes=_SIZES, submissions=st.lists(_SUBMISSION, min_size=1, max_size=8), cap=st.integers(0, 3000))
@settings(max_examples=100, deadline=None)
def test_decisions_keep_within_the_cap_oldest_first(
    sizes: list[int], submissions: list[list[tuple[int, bool]]], cap: int
) -> None:
    state = RetentionState()
    permanent_digests: set[str] = set()
    for n, picks in enumerate(submissions, start=1):
        artifacts = [(D[i], sizes[i], "permanent" if perm else "bulk") for i, perm in picks]
        permanent_digests |= {d for d, _, r in artifacts if r == "permanent"}
        state = apply(state, _published(n, *artifacts))
        decision = decide(state, cap)
        after = _evict_with(state, decision)
        newest = state.newest
        assert newest is not None
        order = {sid: sub.position for sid, sub in state.submissions.items()}
        # the arithmetic: freed bytes are exactly what left the count
        assert state.bulk_bytes - after.bulk_bytes == decision.bytes_freed
        assert after.bulk_bytes == counted_bytes(sum(a.size for a in after.retained()))
        # never permanent, never the newest
        assert not set(decision.digests) & permanent_digests
        assert not set(decision.digests) & newest.digests
        assert after.submissions[newest.submission_id] == newest
        assert _sid(n) not in decision.submission_ids
        # within the cap, unless what is left cannot be evicted
        pinned = _pinned(state)
        if after.bulk_bytes > cap:
            assert all(a.submission_id == newest.submission_id or a.digest in pinned for a in after.retained())
        assert decision.newest_alone_exceeds == (newest.bulk_bytes > cap)
        # oldest first: nothing evictable is left at or before the youngest affected Submission
        positions = [order[sid] for sid in decision.submission_ids]
        assert positions == sorted(positions)
        if positions:
            youngest = positions[-1]
            younger_holders = {a.digest for a in after.retained() if order[a.submission_id] > youngest}
            for a in after.retained():
                if order[a.submission_id] <= youngest:
                    assert a.digest in pinned or a.digest in younger_holders
        # a decision is complete: deciding again on its outcome evicts nothing more
        assert decide(after, cap).digests == ()
        state = after
