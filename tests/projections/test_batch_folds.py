"""The batch folds (run state, mirror) equal folding with the pure ``apply`` Event by Event, on generated logs.

Both are driven by the same handlers; these tests check that the draft (thawed once for a whole log, or
per Event by ``apply``, or built half way and folded on) always freezes to the same state."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import InputError
from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    ArtifactRef,
    AssessmentFinished,
    BenchmarkIdentity,
    BulkEvicted,
    CandidateScore,
    CandidateSelected,
    EpisodeFailure,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
    SubmissionRejected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.records import Visibility
from evoledger.projections import mirror, run_state
from evoledger.projections.mirror import MirrorBuilder
from evoledger.projections.run_state import RunState, RunStateBuilder
from hypothesis import given, settings
from hypothesis import strategies as st

EXAMPLES = settings(max_examples=80, deadline=None)
_D = [digest_of(f"blob {i}".encode()) for i in range(6)]
_CONTENT = digest_of(canonical_json({"n": 1}))


def _sid(n: int) -> str:
    return f"submission-{n:06d}"


def _finished(sid: str | None, index: int, code: str | None, n: int) -> EpisodeFinished:
    failure = None if code is None else EpisodeFailure(code=code, message=f"m{n}", traceback_digest=_D[n % 2])  # type: ignore[arg-type]
    return EpisodeFinished(
        submission_id=sid,
        evaluation_id=None if sid is not None else "evaluation-x",
        split="train",
        index=index,
        status="ok" if code is None else code,  # type: ignore[arg-type]
        episode_return=float(n),
        steps=n,
        terminated=n % 2 == 0,
        truncated=n % 3 == 0,
        trajectory_digest=_D[n % 6],
        policy_log_digest=_D[3] if code is not None and n % 2 else None,
        failure=failure,
        metrics={"k": n} if n % 4 == 0 else {},
    )


_op = st.one_of(
    st.tuples(st.just("create"), st.integers(1, 50)),
    st.tuples(st.just("accept"), st.integers(1, 3), st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True)),
    st.tuples(
        st.just("episode"), st.integers(0, 3), st.integers(0, 6), st.sampled_from([None, "exception", "timeout"])
    ),
    st.tuples(st.just("fault"), st.integers(0, 3), st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True)),
    st.tuples(
        st.just("publish"),
        st.integers(1, 3),
        st.lists(st.tuples(st.sampled_from(["a", "b/c", "b", "d.txt"]), st.integers(0, 5), st.booleans()), max_size=3),
    ),
    st.tuples(st.just("evict"), st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("reject"), st.booleans()),
    st.tuples(st.just("finish"), st.booleans()),
    st.tuples(st.just("agent"), st.booleans()),
    st.tuples(st.just("validate"), st.integers(1, 3), st.integers(0, 3)),
    st.tuples(st.just("judge"), st.integers(1, 3)),
    st.tuples(st.just("host-only"), st.integers(0, 3)),
)


def _events(ops: list[tuple[Any, ...]]) -> list[EventBase]:
    out: list[EventBase] = []
    for n, (op, *args) in enumerate(ops):
        if op == "create":
            out.append(
                RunCreated(
                    run_id="r",
                    benchmark=BenchmarkIdentity.of("cartpole", {}),
                    episode_budget=args[0],
                    max_submissions=3,
                    config={"seed": args[0]},
                    pool_commitment=_D[0],
                    seed=args[0],
                    created_by="test",
                )
            )
        elif op == "accept":
            out.append(
                SubmissionAccepted(
                    submission_id=_sid(args[0]),
                    program_digest=_D[args[0] % 6],
                    episodes=tuple(sorted(args[1])),
                    budget_before=20,
                    budget_after=20 - len(args[1]),
                    submissions_used=args[0],
                )
            )
        elif op == "episode":
            out.append(_finished(_sid(args[0]) if args[0] else None, args[1], args[2], n))
        elif op == "fault":
            out.append(
                InfraFault(
                    submission_id=_sid(args[0]) if args[0] else None,
                    evaluation_id=None if args[0] else "evaluation-x",
                    split="train",
                    indices=tuple(args[1]),
                    refunded_units=len(args[1]) if args[0] else 0,
                    reason="worker died",
                )
            )
        elif op == "publish":
            arts = {
                name: ArtifactRef(
                    name=name,
                    media_type="text/plain",
                    digest=_D[d],
                    size=d + 1,
                    retention="permanent" if perm else "bulk",
                )
                for name, d, perm in args[1]
            }
            out.append(
                FeedbackPublished(
                    submission_id=_sid(args[0]),
                    score=None if n % 5 == 0 else n / 3,
                    content_digest=_CONTENT,
                    budget_used=n,
                    budget_left=20,
                    artifacts=tuple(arts.values()),
                )
            )
        elif op == "evict":
            out.append(
                BulkEvicted(digests=tuple(_D[i] for i in args[0]), submission_ids=(), reason="cap", bytes_freed=n)
            )
        elif op == "reject":
            if args[0]:
                out.append(SubmissionRejected(code="c", message=f"m{n}", retryable=True, request={"n": n}))
            else:
                out.append(FinishRejected(code="budget_left", message=f"m{n}", retryable=False))
        elif op == "finish":
            out.append(FinishAccepted(candidates=(_sid(1), _sid(2)) if args[0] else (_sid(3),), budget_left=n))
        elif op == "agent":
            if args[0]:
                out.append(AgentStarted(agent="hill-climb", command=("python",), pid=7))
            else:
                out.append(AgentExited(pid=7, duration_ms=n, reason="finished"))
        elif op == "validate":
            out.append(
                ValidationEpisodeFinished(
                    submission_id=_sid(args[0]),
                    program_digest=_D[1],
                    index=args[1],
                    status="ok",
                    episode_return=float(n),
                    steps=n,
                    terminated=True,
                    truncated=False,
                    trajectory_digest=_D[2],
                )
            )
        elif op == "judge":
            score = CandidateScore(
                submission_id=_sid(args[0]), program_digest=_D[0], score=1.0, policy_failures=0, finish_position=1
            )
            out.append(
                CandidateSelected(submission_id=_sid(args[0]), program_digest=_D[0], scores=(score,), tie_break="t")
            )
            out.append(
                AssessmentFinished(
                    submission_id=_sid(args[0]), program_digest=_D[0], score=2.0, episode_count=0, episodes=()
                )
            )
            out.append(RunEnded(reason="finished", selected_submission_id=_sid(args[0]) if n % 2 else None))
        else:
            out.append(EpisodePlanned(split="train", index=args[0], env_seed=n, policy_seed=n + 1))
            out.append(EpisodeStarted(submission_id=_sid(1), split="train", index=args[0]))
    return out


def _story(n: int) -> list[tuple[Any, ...]]:
    """A plausible backbone: Submissions accepted, run, published (sometimes twice), then evicted."""
    ops: list[tuple[Any, ...]] = [("create", 30)]
    for k in range(1, n + 1):
        ops += [("accept", k, [0, 1, 2]), ("episode", k, 0, None), ("episode", k, 1, "exception")]
        ops += [("fault", k, [2]), ("publish", k, [("a", k, False), ("b", 5, True)])]
        ops += [("publish", k, [("c", k, False)])] if k % 2 else [("episode", k, 2, None)]
    return [*ops, ("evict", [1, 2]), ("reject", True), ("finish", True), ("judge", 1)]


_ops = st.builds(
    lambda n, noise, seed: _mixed(_story(n), noise, seed),
    st.integers(0, 3),
    st.lists(_op, max_size=20),
    st.randoms(use_true_random=False),
)


def _mixed(backbone: list[tuple[Any, ...]], noise: list[tuple[Any, ...]], rnd: Any) -> list[tuple[Any, ...]]:
    ops = list(backbone)
    for op in noise:
        ops.insert(rnd.randint(0, len(ops)), op)
    return ops


@given(_ops, st.integers(0, 40))
@EXAMPLES
def test_the_run_state_batch_fold_equals_applying_event_by_event(ops: list[tuple[Any, ...]], cut: int) -> None:
    events = _events(ops)
    expected = functools.reduce(run_state.apply, events, RunState())
    assert run_state.fold(events) == expected
    # continuing from a folded state, and building half way, give the same state
    assert run_state.fold(events[cut:], run_state.fold(events[:cut])) == expected
    builder = RunStateBuilder()
    for event in events[:cut]:
        builder.add(event)
    assert builder.build() == functools.reduce(run_state.apply, events[:cut], RunState())
    for event in events[cut:]:  # the builder folds on after building
        builder.add(event)
    assert builder.build() == expected


_VIS = st.sampled_from([None, "public", "host"])


@given(_ops, st.lists(_VIS, min_size=60, max_size=60), st.integers(0, 40))
@EXAMPLES
def test_the_mirror_batch_fold_equals_applying_event_by_event(
    ops: list[tuple[Any, ...]], visibilities: list[Visibility | None], cut: int
) -> None:
    events = _events(ops)
    # mostly the stored visibility is the declared one; sometimes a public Event is stored host
    items: list[tuple[Visibility, EventBase] | EventBase] = [
        e if v is None else (v if v == "host" else type(e).visibility, e)
        for e, v in zip(events, visibilities * 3, strict=False)
    ]
    expected = mirror.MirrorState()
    for item in items:
        expected = mirror.apply(expected, item[1], item[0]) if isinstance(item, tuple) else mirror.apply(expected, item)
    assert mirror.fold(items) == expected
    assert mirror.fold(items[cut:], mirror.fold(items[:cut])) == expected
    builder = MirrorBuilder()
    for n, item in enumerate(items):
        event = item[1] if isinstance(item, tuple) else item
        stored = item[0] if isinstance(item, tuple) else type(event).visibility
        builder.add(event, stored)
        if n == cut:  # the builder folds on after building
            assert builder.build() == mirror.fold(items[: n + 1])
    assert builder.build() == expected


def test_the_mirror_builder_refuses_an_unknown_visibility() -> None:
    event = SubmissionRejected(code="c", message="m", retryable=True)
    with pytest.raises(InputError, match="visibility must be 'public' or 'host'"):
        MirrorBuilder().add(event, "secret")  # type: ignore[arg-type]


def test_a_fold_of_nothing_is_the_empty_state() -> None:
    assert run_state.fold([]) == RunState()
    assert mirror.fold([]) == mirror.MirrorState()
