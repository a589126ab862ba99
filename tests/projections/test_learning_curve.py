"""The learning-curve projection: hand-checked on a small Run, and its budget and best-so-far rules as properties."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    AssessmentFinished,
    BenchmarkIdentity,
    CandidateScore,
    CandidateSelected,
    EpisodeFailure,
    EpisodeFinished,
    EpisodeSummary,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    InfraFault,
    ProgramSnapshotted,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
)
from evoledger.ledger.store import Ledger
from evoledger.projections import learning_curve, run_state
from evoledger.projections.learning_curve import best_so_far
from hypothesis import given, settings
from hypothesis import strategies as st

_D = [digest_of(f"blob {i}".encode()) for i in range(8)]
_CONTENT = digest_of(canonical_json({"n": 1}))


def _sid(n: int) -> str:
    return f"submission-{n:06d}"


def _created(budget: int, direction: str = "maximize") -> RunCreated:
    return RunCreated(
        run_id="lc-1",
        benchmark=BenchmarkIdentity.of("cartpole", {"max_episode_steps": 500}),
        episode_budget=budget,
        max_submissions=budget,
        pool_commitment=digest_of(b"pool"),
        benchmark_spec={"score_direction": direction},
        seed=4,
        created_by="evoledger test",
    )


def _episode(sid: str, index: int, episode_return: float, code: str | None = None) -> EpisodeFinished:
    failure = None if code is None else EpisodeFailure(code=code, message="no")  # type: ignore[arg-type]
    return EpisodeFinished(
        submission_id=sid,
        split="train",
        index=index,
        status="ok" if code is None else code,  # type: ignore[arg-type]
        episode_return=episode_return,
        steps=3,
        terminated=True,
        truncated=False,
        trajectory_digest=_D[index % 8],
        failure=failure,
    )


def _accepted(n: int, episodes: tuple[int, ...], before: int, program: str) -> SubmissionAccepted:
    return SubmissionAccepted(
        submission_id=_sid(n),
        program_digest=program,
        episodes=episodes,
        budget_before=before,
        budget_after=before - len(episodes),
        submissions_used=n,
    )


def _feedback(n: int, score: float | None, used: int, left: int) -> FeedbackPublished:
    return FeedbackPublished(
        submission_id=_sid(n), score=score, content_digest=_CONTENT, budget_used=used, budget_left=left
    )


def _small_run() -> list[EventBase]:
    """Three Submissions: one with a Policy failure and a refunded infra fault, one worse, one best."""
    return [
        _created(10),
        AgentStarted(agent="hill-climb", command=("agent",), pid=7),
        ProgramSnapshotted(
            program_digest=_D[0],
            files={"policy.py": _D[1]},
            entry_point="policy.py",
            file_count=1,
            total_bytes=1,
            source="initial",
        ),
        _accepted(1, (0, 1, 2), 10, _D[2]),
        _episode(_sid(1), 0, 5.0),
        _episode(_sid(1), 1, -1.0, "exception"),
        InfraFault(submission_id=_sid(1), split="train", indices=(2,), refunded_units=1, reason="env crashed"),
        _feedback(1, 2.5, 2, 8),
        _accepted(2, (0, 1), 8, _D[3]),
        _episode(_sid(2), 0, 10.0),
        _episode(_sid(2), 1, -1.0, "timeout"),
        _feedback(2, 1.0, 4, 6),
        _accepted(3, (3,), 6, _D[4]),
        _episode(_sid(3), 3, 7.0),
        _feedback(3, 7.0, 5, 5),
        FinishAccepted(candidates=(_sid(3), _sid(1)), budget_left=5),
        AgentExited(pid=7, exit_code=0, duration_ms=4000, reason="exited"),
        CandidateSelected(
            submission_id=_sid(3),
            program_digest=_D[4],
            scores=(
                CandidateScore(
                    submission_id=_sid(3), program_digest=_D[4], score=6.0, policy_failures=0, finish_position=1
                ),
                CandidateScore(
                    submission_id=_sid(1), program_digest=_D[2], score=3.0, policy_failures=1, finish_position=2
                ),
            ),
            tie_break="best score",
        ),
        AssessmentFinished(
            submission_id=_sid(3),
            program_digest=_D[4],
            score=6.5,
            episode_count=2,
            episodes=(
                EpisodeSummary(index=0, status="ok", episode_return=6.0, steps=3, trajectory_digest=_D[5]),
                EpisodeSummary(index=1, status="ok", episode_return=7.0, steps=3, trajectory_digest=_D[6]),
            ),
        ),
        RunEnded(reason="finished", selected_submission_id=_sid(3)),
    ]


def test_a_small_run_folds_to_the_hand_checked_curve() -> None:
    curve = learning_curve.fold(_small_run())
    assert [p.submission_id for p in curve.points] == [_sid(1), _sid(2), _sid(3)]
    assert [p.charged for p in curve.points] == [2, 2, 1]  # Submission 1's infra fault was refunded
    assert [p.budget_spent for p in curve.points] == [2, 4, 5]
    assert [p.score for p in curve.points] == [2.5, 1.0, 7.0]
    assert [p.best_so_far for p in curve.points] == [2.5, 2.5, 7.0]
    assert [dict(p.failures) for p in curve.points] == [{"exception": 1}, {"timeout": 1}, {}]
    assert [p.infra_faults for p in curve.points] == [1, 0, 0]
    assert [p.returns for p in curve.points] == [(5.0, -1.0), (10.0, -1.0), (7.0,)]
    assert [p.program_digest for p in curve.points] == [_D[2], _D[3], _D[4]]
    assert curve.failures_by_code() == {"exception": 1, "timeout": 1}
    assert [c.submission_id for c in curve.candidates] == [_sid(3), _sid(1)]  # best Validation score first
    assert (curve.validation_score(_sid(1)), curve.validation_score(_sid(2))) == (3.0, None)
    assert (curve.selected, curve.assessment_score, curve.assessment_returns) == (_sid(3), 6.5, (6.0, 7.0))
    assert (curve.benchmark_id, dict(curve.benchmark_params), curve.agent, curve.seed) == (
        "cartpole",
        {"max_episode_steps": 500},
        "hill-climb",
        4,
    )
    assert (curve.state.ended_reason, curve.initial_program, curve.programs[_D[0]]) == (
        "finished",
        _D[0],
        {"policy.py": _D[1]},
    )
    assert curve.agent_seconds == 4.0
    assert (curve.head_hash, curve.evaluation_seconds, curve.judging_seconds) == (None, None, None)  # no row times


def test_the_curve_reuses_the_run_state_fold() -> None:
    events = _small_run()
    assert learning_curve.fold(events).state == run_state.fold(events)


def test_a_minimizing_benchmark_keeps_the_lowest_score_as_best() -> None:
    events = [_created(10, "minimize"), _accepted(1, (0,), 10, _D[1]), _feedback(1, 4.0, 1, 9)]
    events += [_accepted(2, (1,), 9, _D[2]), _feedback(2, 6.0, 2, 8), _accepted(3, (2,), 8, _D[3])]
    events += [_feedback(3, None, 3, 7), _accepted(4, (3,), 7, _D[3]), _feedback(4, 1.0, 4, 6)]
    assert [p.best_so_far for p in learning_curve.fold(events).points] == [4.0, 4.0, 4.0, 1.0]


def test_recorded_events_give_the_head_hash_and_the_times(tmp_path: Path) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ticks = itertools.count()
    with Ledger.create(tmp_path / "run", clock=lambda: start + timedelta(seconds=next(ticks))) as ledger:
        for event in _small_run():  # one append (one clock reading) per Event
            ledger.append([event])
        curve = learning_curve.fold(ledger.events())
        head = ledger.head().hash
    assert curve.head_hash == head
    # acceptance -> Feedback: Submission 1 is Events 3..7 (4 s), 2 is 8..11 (3 s), 3 is 12..14 (2 s)
    assert [p.evaluation_seconds for p in curve.points] == [4.0, 3.0, 2.0]
    assert curve.evaluation_seconds == 9.0
    assert curve.judging_seconds == 3.0  # agent-exited (Event 16) -> run-ended (Event 19)
    bare = learning_curve.fold(_small_run())  # the same curve, but for what only the log rows tell
    assert bare.points == tuple(replace(p, evaluation_seconds=None) for p in curve.points)


_submission = st.tuples(
    st.integers(1, 4),  # Episodes selected
    st.integers(0, 4),  # of which voided by a refunded infra fault
    st.one_of(st.none(), st.floats(-100, 100, allow_nan=False)),  # public score
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_submission, min_size=1, max_size=8), st.sampled_from(["maximize", "minimize"]))
def test_budget_spent_accumulates_charges_and_best_is_the_running_best(
    submissions: list[tuple[int, int, float | None]], direction: str
) -> None:
    budget = 40
    events: list[EventBase] = [_created(budget, direction)]
    left, next_index, charged = budget, 0, []
    for n, (count, faulted, score) in enumerate(submissions, start=1):
        indices = tuple(range(next_index, next_index + count))
        next_index += count
        events.append(_accepted(n, indices, left, _D[n % 8]))
        left -= count
        voided = indices[: min(faulted, count)]
        for i in indices[len(voided) :]:
            events.append(_episode(_sid(n), i, float(i)))
        if voided:
            events.append(
                InfraFault(submission_id=_sid(n), split="train", indices=voided, refunded_units=len(voided), reason="x")
            )
            left += len(voided)
        charged.append(count - len(voided))
        events.append(_feedback(n, score, budget - left, left))
    curve = learning_curve.fold(events)
    assert [p.charged for p in curve.points] == charged
    assert [p.budget_spent for p in curve.points] == list(itertools.accumulate(charged))
    assert (
        curve.points[-1].budget_spent == curve.state.charged - curve.state.refunded == budget - curve.state.budget_left
    )
    scores = [s for _, _, s in submissions]
    pick = max if direction == "maximize" else min
    for k, point in enumerate(curve.points):
        seen = [s for s in scores[: k + 1] if s is not None]
        assert point.best_so_far == (pick(seen) if seen else None)
    assert [p.infra_faults for p in curve.points] == [min(f, c) for c, f, _ in submissions]


def test_best_so_far_skips_missing_scores() -> None:
    assert best_so_far([], "maximize") == []
    assert best_so_far([None, None], "minimize") == [None, None]
    assert best_so_far([1.0, None, 0.5, 2.0], "maximize") == [1.0, 1.0, 1.0, 2.0]
