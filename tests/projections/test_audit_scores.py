"""The audit's recomputation of scores equals the Host's own computation, and a forged aggregate differs from it."""

from __future__ import annotations

import json
from typing import Any, Final, get_args

import pytest
from evoledger.benchmarks.classic_control import make_pendulum
from evoledger.benchmarks.toy import make_toy_counter
from evoledger.kernel.authoring import Benchmark, EpisodeRecord, EpisodeStatus, score_of
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    BenchmarkIdentity,
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    RunCreated,
    SubmissionAccepted,
)
from evoledger.projections.audit import fold, rows_from_events
from evoledger.projections.scoring import ScoreRule, ScoreRuleError, recorded_score_rule, score_episodes
from hypothesis import given, settings
from hypothesis import strategies as st

BENCHMARKS: Final[dict[str, Benchmark]] = {"toy-counter": make_toy_counter(), "pendulum": make_pendulum()}
STATUSES: Final = get_args(EpisodeStatus)
DIGEST: Final = digest_of(b"x")

outcomes = st.lists(
    st.tuples(
        st.sampled_from(STATUSES),
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False) | st.integers(-500, 500),
    ),
    max_size=12,
)


def _records(episodes: list[tuple[str, float]]) -> list[EpisodeRecord]:
    return [
        EpisodeRecord(
            split="train",
            index=i,
            status=status,  # type: ignore[arg-type]
            episode_return=float(episode_return),
            steps=1,
            terminated=True,
            truncated=False,
        )
        for i, (status, episode_return) in enumerate(episodes)
    ]


def _recorded_spec(benchmark: Benchmark) -> dict[str, Any]:
    """The Benchmark's spec as ``run-created`` records it and the audit reads it back."""
    parsed: dict[str, Any] = json.loads(canonical_json(benchmark.spec.model_dump(mode="json")))
    return parsed


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
@settings(max_examples=60, deadline=None)
@given(episodes=outcomes)
def test_the_recorded_rule_recomputes_the_hosts_score_and_the_benchmarks_own(
    name: str, episodes: list[tuple[str, float]]
) -> None:
    benchmark = BENCHMARKS[name]
    records = _records(episodes)
    host = score_of(benchmark, records)
    rule = recorded_score_rule(_recorded_spec(benchmark))
    assert rule is not None
    recorded_returns = [(r.status, json.loads(canonical_json(r.episode_return))) for r in records]
    assert score_episodes(rule, recorded_returns) == host
    assert benchmark.feedback(records).score == host
    assert score_episodes(rule, reversed(recorded_returns)) == host  # exact sum: order does not matter


def _run(episodes: list[tuple[str, float]], score: float | None, benchmark: Benchmark) -> list[EventBase]:
    indices = list(range(len(episodes)))
    return [
        RunCreated(
            run_id="r",
            benchmark=BenchmarkIdentity.of(benchmark.spec.id, {}),
            episode_budget=max(1, len(episodes)),
            max_submissions=1,
            benchmark_spec=_recorded_spec(benchmark),
            pool_commitment=DIGEST,
            created_by="test",
        ),
        SubmissionAccepted(
            submission_id="submission-000001",
            program_digest=DIGEST,
            episodes=tuple(indices),
            budget_before=len(episodes),
            budget_after=0,
            submissions_used=1,
        ),
        *(
            EpisodeFinished(
                submission_id="submission-000001",
                split="train",
                index=i,
                status=status,  # type: ignore[arg-type]
                episode_return=float(episode_return),
                steps=1,
                terminated=True,
                truncated=False,
                trajectory_digest=DIGEST,
                failure=None if status in ("ok", "infra_fault") else {"code": status, "message": "boom"},  # type: ignore[arg-type]
            )
            for i, (status, episode_return) in zip(indices, episodes, strict=True)
            if status != "infra_fault"
        ),
        FeedbackPublished(
            submission_id="submission-000001", score=score, content_digest=DIGEST, budget_used=0, budget_left=0
        ),
    ]


@settings(max_examples=60, deadline=None)
@given(episodes=outcomes.filter(bool), forged=st.floats(-1e3, 1e3, allow_nan=False))
def test_the_audit_accepts_the_hosts_feedback_score_and_flags_any_other(
    episodes: list[tuple[str, float]], forged: float
) -> None:
    benchmark = BENCHMARKS["toy-counter"]
    kept = [e for e in episodes if e[0] != "infra_fault"]  # the Host records no result for an infra fault
    host = score_of(benchmark, _records(kept))
    honest = fold(rows_from_events(_run(episodes, host, benchmark)))
    assert not [v for v in honest.violations if v.rule == "feedback_score"]
    assert honest.scores is not None
    assert honest.scores.feedback == {"submission-000001": host}
    if forged == host:
        return
    report = fold(rows_from_events(_run(episodes, forged, benchmark)))
    found = [v for v in report.violations if v.rule == "feedback_score"]
    assert [v.seq for v in found] == [len(_run(episodes, forged, benchmark)) - 1]
    assert f"recorded as {forged!r}" in found[0].message
    assert f"give {host!r}" in found[0].message


def test_a_spec_without_a_rule_is_a_note_and_an_unreadable_rule_a_violation() -> None:
    benchmark = BENCHMARKS["toy-counter"]
    events = _run([("ok", 1.0)], 99.0, benchmark)
    created = events[0]
    assert isinstance(created, RunCreated)
    spec = dict(created.benchmark_spec)
    without = [created.model_copy(update={"benchmark_spec": {k: v for k, v in spec.items() if k != "scoring"}})]
    report = fold(rows_from_events([*without, *events[1:]]))
    assert report.scores is None
    assert not [v for v in report.violations if v.rule == "feedback_score"]
    assert any("not recomputed" in note for note in report.notes)
    broken = [created.model_copy(update={"benchmark_spec": {**spec, "scoring": {"rule": "median"}}})]
    report = fold(rows_from_events([*broken, *events[1:]]))
    assert [v.rule for v in report.violations if v.rule.startswith("score")] == ["score_rule_unreadable"]


def test_the_rule_applies_failures_infra_faults_and_rounding() -> None:
    rule = ScoreRule(failure_return=-10.0, digits=2)
    assert score_episodes(rule, [("ok", 1.0), ("timeout", 99.0), ("infra_fault", 1e9), ("ok", 2.0)]) == -2.33
    assert score_episodes(rule, [("infra_fault", 5.0)]) is None
    assert score_episodes(ScoreRule(failure_return=0.0), [("ok", 0.1)] * 3) == pytest.approx(0.1)
    with pytest.raises(ScoreRuleError, match=r"benchmark_spec\.scoring"):
        recorded_score_rule({"scoring": {"rule": "mean_return"}})
    assert recorded_score_rule({}) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [("episode_return", 10**400), ("episode_return", "9"), ("episode_return", None), ("score", 10**400)],
)
def test_hostile_recorded_numbers_are_findings_not_crashes(field: str, value: Any) -> None:
    benchmark = BENCHMARKS["toy-counter"]
    rows = rows_from_events(_run([("ok", 1.0), ("ok", 2.0)], 1.5, benchmark))
    kind = "episode-finished" if field == "episode_return" else "feedback-published"
    seq = next(row[0] for row in rows if row[1] == kind)
    payload = json.loads(rows[seq][4])
    payload[field] = value
    rows[seq] = (*rows[seq][:4], json.dumps(payload).encode())
    report = fold(rows)
    found = {v.rule for v in report.violations if v.seq == seq}
    assert found & {"malformed_event", "feedback_score"}, report.violations
