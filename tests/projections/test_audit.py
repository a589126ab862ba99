"""The protocol audit fold over hand-built Event sequences: one valid Run, then one broken rule at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    ArtifactRef,
    AssessmentFinished,
    BenchmarkIdentity,
    BulkEvicted,
    CandidateScore,
    CandidateSelected,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    ProgramSnapshotted,
    RequestFailed,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
    SubmissionRejected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.records import StoredEvent
from evoledger.projections.audit import (
    AuditRow,
    SelectionScore,
    fold,
    rank_key,
    rows_from_events,
    rows_from_records,
)
from hypothesis import given, settings
from hypothesis import strategies as st

P1, P2 = digest_of(b"program one"), digest_of(b"program two")
TRAJ = digest_of(b"a trajectory")
CONTENT = digest_of(b"{}")
SEED = 424242
ENV_SEEDS = [9_000_000_000_000_000_000 + i for i in range(20)]


def _config(**overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "episode_pool_size": 6,
        "max_episodes_per_submission": 4,
        "validation": {"episodes": 2, "max_candidates": 2},
        "assessment": {"episodes": 2},
        "fallback": "none",
    }
    config.update(overrides)
    return config


@dataclass
class Script:
    """Builds a valid Run Event by Event; tests then break one rule."""

    budget: int = 8
    max_submissions: int = 3
    policy: str = "allow_early"
    config: dict[str, Any] = field(default_factory=_config)
    events: list[EventBase | tuple[str, EventBase]] = field(default_factory=list)
    scoring: dict[str, Any] | None = field(default_factory=lambda: {"rule": "mean_return", "failure_return": 0.0})
    """The recorded Benchmark's scoring rule (``projections.scoring``); every score the Script records follows it."""
    remaining: int = 0
    used: int = 0
    count: int = 0

    def create(self) -> Script:
        self.remaining = self.budget
        splits = [
            ("train", self.config["episode_pool_size"]),
            ("validation", self.config["validation"]["episodes"]),
            ("assessment", self.config["assessment"]["episodes"]),
        ]
        planned = [(s, i) for s, n in splits for i in range(n)]
        self.events += [
            RunCreated(
                run_id="r",
                benchmark=BenchmarkIdentity.of("toy", {}),
                episode_budget=self.budget,
                max_submissions=self.max_submissions,
                finish_budget_policy=self.policy,  # type: ignore[arg-type]
                config=self.config,
                benchmark_spec={} if self.scoring is None else {"scoring": self.scoring},
                pool_commitment=digest_of(b"plan"),
                seed=SEED,
                created_by="test",
            ),
            *(
                EpisodePlanned(split=s, index=i, env_seed=ENV_SEEDS[n], policy_seed=ENV_SEEDS[n] + 100)  # type: ignore[arg-type]
                for n, (s, i) in enumerate(planned)
            ),
            self.snapshot(P1, "initial"),
            AgentStarted(agent="x", command=("x",), pid=7),
        ]
        return self

    @staticmethod
    def snapshot(program: str, source: str = "submission") -> ProgramSnapshotted:
        return ProgramSnapshotted(
            program_digest=program,
            files={"policy.py": TRAJ},
            entry_point="policy.py",
            file_count=1,
            total_bytes=1,
            source=source,  # type: ignore[arg-type]
        )

    def submit(
        self, episodes: list[int], program: str = P1, returns: float = 1.0, status: str = "ok", bulk: str | None = None
    ) -> str:
        self.count += 1
        sid = f"submission-{self.count:06d}"
        self.events += [
            self.snapshot(program),
            SubmissionAccepted(
                submission_id=sid,
                program_digest=program,
                episodes=tuple(episodes),
                budget_before=self.remaining,
                budget_after=self.remaining - len(episodes),
                submissions_used=self.count,
            ),
            *(EpisodeStarted(submission_id=sid, split="train", index=i) for i in episodes),
            *(self.finished(sid, i, returns, status) for i in episodes),
        ]
        self.remaining -= len(episodes)
        self.used += len(episodes)
        artifacts = (
            [ArtifactRef(name="trace.json", media_type="application/json", digest=bulk, size=10, retention="bulk")]
            if bulk
            else []
        )
        self.events.append(
            FeedbackPublished(
                submission_id=sid,
                score=returns,
                content_digest=CONTENT,
                artifacts=tuple(artifacts),
                budget_used=self.used,
                budget_left=self.remaining,
            )
        )
        return sid

    @staticmethod
    def finished(sid: str, index: int, returns: float = 1.0, status: str = "ok") -> EpisodeFinished:
        failure = None if status == "ok" else {"code": status, "message": "boom"}
        return EpisodeFinished(
            submission_id=sid,
            split="train",
            index=index,
            status=status,  # type: ignore[arg-type]
            episode_return=returns,
            steps=3,
            terminated=True,
            truncated=False,
            trajectory_digest=TRAJ,
            failure=failure,  # type: ignore[arg-type]  # a dict: the model validates it
            duration_ms=1,
        )

    def finish(self, candidates: list[str]) -> None:
        self.events += [
            FinishAccepted(candidates=tuple(candidates), budget_left=self.remaining),
            AgentExited(pid=7, exit_code=0, duration_ms=1, reason="finished"),
        ]

    def validate(self, sid: str, program: str, returns: float, indices: tuple[int, ...] = (0, 1)) -> None:
        self.events += [
            ValidationEpisodeFinished(
                submission_id=sid,
                program_digest=program,
                index=i,
                status="ok",
                episode_return=returns,
                steps=3,
                terminated=True,
                truncated=False,
                trajectory_digest=TRAJ,
                duration_ms=1,
            )
            for i in indices
        ]

    def select(
        self, chosen: str, scores: list[tuple[str, str, float | None, int]], direction: str = "maximize"
    ) -> None:
        program = next(p for s, p, _, _ in scores if s == chosen)
        self.events.append(
            CandidateSelected(
                submission_id=chosen,
                program_digest=program,
                scores=tuple(
                    CandidateScore(submission_id=s, program_digest=p, score=sc, policy_failures=f, finish_position=n)
                    for n, (s, p, sc, f) in enumerate(scores, start=1)
                ),
                tie_break=f"best validation score ({direction}), then fewer Policy failures, then finish position",
            )
        )

    def assess(self, sid: str, program: str, indices: tuple[int, ...] = (0, 1)) -> None:
        episodes = tuple(
            EpisodeSummary(index=i, status="ok", episode_return=1.0, steps=3, trajectory_digest=TRAJ) for i in indices
        )
        self.events.append(
            AssessmentFinished(
                submission_id=sid, program_digest=program, score=1.0, episode_count=len(episodes), episodes=episodes
            )
        )

    def end(self, selected: str | None, reason: str = "finished") -> None:
        self.events.append(
            RunEnded(
                reason=reason,  # type: ignore[arg-type]
                selected_submission_id=selected,
                summary={"budget_used": self.used, "budget_left": self.remaining},
            )
        )

    def rows(self) -> list[AuditRow]:
        return rows_from_events(self.events)  # type: ignore[arg-type]


def valid_run() -> Script:
    script = Script().create()
    first = script.submit([0, 1, 2], returns=5.0)
    second = script.submit([1, 3, 4], program=P2, returns=7.0)
    script.finish([first, second])
    script.validate(first, P1, 5.0)
    script.validate(second, P2, 8.0)
    script.select(second, [(first, P1, 5.0, 0), (second, P2, 8.0, 0)])
    script.assess(second, P2)
    script.end(second)
    return script


def rules(rows: list[AuditRow], **kwargs: Any) -> list[tuple[str, int | None]]:
    return [(v.rule, v.seq) for v in fold(rows, **kwargs).violations]


def index_of(script: Script, kind: str, nth: int = 0) -> int:
    return [i for i, e in enumerate(script.events) if getattr(e, "kind", None) == kind][nth]


def test_a_valid_run_passes_and_its_figures_are_rederived() -> None:
    report = fold(valid_run().rows())
    assert report.ok, report.violations
    assert report.first is None
    assert (report.budget_used, report.budget_left, report.submissions) == (6, 2, 2)
    assert (report.finished, report.selected, report.ended) == (True, "submission-000002", "finished")
    assert report.score_direction == "maximize"
    assert report.direction_source == "the candidate-selected tie-break text"
    assert report.rules is not None
    assert report.rules.pool_size == 6
    assert report.rules.candidate_limit == 2
    assert [(p.split, p.index) for p in report.planned][:2] == [("train", 0), ("train", 1)]
    assert not report.notes


def test_rows_from_records_matches_rows_from_events() -> None:
    rows = valid_run().rows()
    records = [StoredEvent(s, k, v, vis, p, "", "", "") for s, k, v, vis, p in rows]  # type: ignore[arg-type]
    assert rows_from_records(records) == rows


def test_an_over_budget_acceptance_is_a_budget_violation() -> None:
    script = Script(budget=4).create()
    script.submit([0, 1, 2])
    script.events.append(
        SubmissionAccepted(
            submission_id="submission-000002",
            program_digest=P1,
            episodes=(0, 1, 2),
            budget_before=3,
            budget_after=0,
            submissions_used=2,
        )
    )
    found = dict(rules(script.rows()))
    seq = len(script.events) - 1
    assert found["budget_mismatch"] == seq
    assert found["budget_not_conserved"] == seq


def test_a_negative_budget_is_reported() -> None:
    script = Script(budget=3).create()
    script.submit([0, 1])
    script.events.append(
        SubmissionAccepted(
            submission_id="submission-000002",
            program_digest=P1,
            episodes=(0, 1, 2),
            budget_before=3,
            budget_after=0,
            submissions_used=2,
        )
    )
    assert "budget_negative" in dict(rules(script.rows()))


def test_a_submission_after_finish_is_reported() -> None:
    script = Script().create()
    first = script.submit([0, 1])
    script.finish([first])
    script.submit([2])
    seq = index_of(script, "submission-accepted", 1)
    assert ("accepted_after_finish", seq) in rules(script.rows())
    assert "episode_after_finish" in dict(rules(script.rows()))


def test_a_candidate_that_was_never_accepted_is_reported() -> None:
    script = Script().create()
    script.submit([0, 1])
    script.finish(["submission-000009"])
    assert ("candidate_not_published", index_of(script, "finish-accepted")) in rules(script.rows())


def test_a_candidate_accepted_but_not_yet_published_is_reported() -> None:
    script = Script().create()
    sid = script.submit([0])
    script.events.pop()  # its Feedback was never published
    script.finish([sid])
    found = dict(rules(script.rows()))
    assert "candidate_not_published" in found


def test_more_candidates_than_the_limit_is_reported() -> None:
    script = Script(config=_config(validation={"episodes": 0, "max_candidates": 3})).create()
    first, second = script.submit([0]), script.submit([1])
    script.finish([first, second])  # without Validation only one Candidate is allowed
    assert "candidate_limit" in dict(rules(script.rows()))


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_a_selection_against_the_tie_break_rule_is_reported(direction: str) -> None:
    script = Script().create()
    first, second = script.submit([0], returns=5.0), script.submit([1], program=P2, returns=7.0)
    script.finish([first, second])
    script.validate(first, P1, 5.0)
    script.validate(second, P2, 8.0)
    wrong = first if direction == "maximize" else second
    script.select(wrong, [(first, P1, 5.0, 0), (second, P2, 8.0, 0)], direction=direction)
    assert ("wrong_selection", index_of(script, "candidate-selected")) in rules(script.rows())


def test_ties_are_broken_by_policy_failures_then_finish_position() -> None:
    a = SelectionScore("submission-000001", P1, 5.0, 1, 1)
    b = SelectionScore("submission-000002", P2, 5.0, 0, 2)
    c = SelectionScore("submission-000003", P2, 5.0, 0, 3)
    none = SelectionScore("submission-000004", P2, None, 0, 4)
    assert sorted([none, c, a, b], key=lambda s: rank_key(s, "maximize")) == [b, c, a, none]
    assert min([a, b], key=lambda s: rank_key(s, "minimize")) == b


def test_the_selection_uses_the_direction_given_and_flags_a_contradicting_tie_break() -> None:
    rows = valid_run().rows()
    report = fold(rows, score_direction="minimize", direction_source="the registry")
    assert {v.rule for v in report.violations} == {"direction_mismatch", "wrong_selection"}
    assert report.direction_source == "the registry"


def test_without_any_direction_the_selection_is_not_verified_and_says_so() -> None:
    script = valid_run()
    selection = script.events[index_of(script, "candidate-selected")]
    assert isinstance(selection, CandidateSelected)
    script.events[index_of(script, "candidate-selected")] = selection.model_copy(update={"tie_break": "custom"})
    report = fold(script.rows())
    assert report.ok
    assert report.direction_needed
    assert any("not verified" in note for note in report.notes)


def test_a_host_kind_stored_as_public_is_a_published_host_fact() -> None:
    script = valid_run()
    position = index_of(script, "validation-episode-finished")
    event = script.events[position]
    assert isinstance(event, EventBase)
    script.events[position] = ("public", event)
    assert ("host_fact_public", position) in rules(script.rows())


def test_a_public_kind_stored_as_host_is_a_visibility_mismatch() -> None:
    script = valid_run()
    position = index_of(script, "feedback-published")
    event = script.events[position]
    assert isinstance(event, EventBase)
    script.events[position] = ("host", event)
    assert ("visibility_mismatch", position) in rules(script.rows())


def test_a_seed_value_in_a_public_payload_is_a_leak() -> None:
    script = valid_run()
    script.events.insert(
        index_of(script, "finish-accepted"),
        SubmissionRejected(code="invalid_request", message=f"bad request near {ENV_SEEDS[3]}", retryable=False),
    )
    position = index_of(script, "submission-rejected")
    assert rules(script.rows()) == [("seed_value_public", position)]


def test_the_run_seed_in_a_public_payload_is_a_leak_but_short_numbers_are_not_searched() -> None:
    script = valid_run()
    script.events.insert(
        index_of(script, "finish-accepted"),
        SubmissionRejected(code="invalid_request", message=f"run {SEED}, index 12, budget 4", retryable=False),
    )
    assert [rule for rule, _ in rules(script.rows())] == ["seed_value_public"]
    small = Script().create()
    small.events[0] = small.events[0].model_copy(update={"seed": 7})  # type: ignore[union-attr]
    small.events.append(SubmissionRejected(code="invalid_request", message="7 episodes", retryable=False))
    assert fold(small.rows()).ok


def test_a_seed_named_field_in_a_public_payload_is_a_leak() -> None:
    script = valid_run()
    position = index_of(script, "episode-finished")
    event = script.events[position]
    assert isinstance(event, EpisodeFinished)
    script.events[position] = event.model_copy(update={"metrics": {"env_seed": 3}})
    assert ("seed_field_public", position) in rules(script.rows())


def test_results_only_for_selected_episodes_and_at_most_once() -> None:
    script = Script().create()
    sid = script.submit([0, 1])
    script.events.insert(index_of(script, "feedback-published"), script.finished(sid, 5))
    script.events.insert(index_of(script, "feedback-published"), script.finished(sid, 0))
    found = rules(script.rows())
    assert ("episode_not_selected", index_of(script, "feedback-published") - 2) in found
    assert ("duplicate_result", index_of(script, "feedback-published") - 1) in found


def test_an_infra_fault_voids_a_result_and_refunds_once() -> None:
    script = Script().create()
    sid = script.submit([0, 1])
    feedback = index_of(script, "feedback-published")
    script.events[feedback - 1] = InfraFault(
        submission_id=sid, split="train", indices=(1,), refunded_units=1, reason="worker died"
    )
    script.events[feedback] = FeedbackPublished(
        submission_id=sid, score=1.0, content_digest=CONTENT, budget_used=1, budget_left=script.budget - 1
    )
    assert fold(script.rows()).ok
    script.events.insert(
        feedback, InfraFault(submission_id=sid, split="train", indices=(1,), refunded_units=1, reason="again")
    )
    found = dict(rules(script.rows()))
    assert found["double_refund"] == feedback
    script.events[feedback] = InfraFault(
        submission_id=sid, split="train", indices=(0,), refunded_units=1, reason="after the result"
    )
    assert "refund_after_result" in dict(rules(script.rows()))


def test_feedback_published_before_every_result_is_reported() -> None:
    script = Script().create()
    script.submit([0, 1])
    del script.events[index_of(script, "episode-finished", 1)]
    assert "feedback_before_results" in dict(rules(script.rows()))


def test_submission_and_episode_limits_and_the_pool_are_enforced() -> None:
    script = Script(budget=40, max_submissions=2, config=_config(episode_pool_size=10)).create()
    script.submit([0, 1, 2, 3, 4])  # 5 > 4 per Submission
    script.submit([9])
    script.events.append(
        SubmissionAccepted(
            submission_id="submission-000003",
            program_digest=P1,
            episodes=(10,),
            budget_before=script.remaining,
            budget_after=script.remaining - 1,
            submissions_used=3,
        )
    )
    found = dict(rules(script.rows()))
    assert found["episode_limit"] == index_of(script, "submission-accepted", 0)
    assert found["submission_limit"] == found["outside_pool"] == len(script.events) - 1


def test_strict_policy_refuses_an_early_finish_and_an_unspendable_allocation() -> None:
    script = Script(budget=10, max_submissions=3, policy="require_budget_exhaustion").create()
    first = script.submit([0])  # leaves 9 for 2 Submissions of at most 4: unspendable
    script.finish([first])
    found = dict(rules(script.rows()))
    assert found["budget_allocation"] == index_of(script, "submission-accepted")
    assert found["finish_with_budget"] == index_of(script, "finish-accepted")


def test_validation_must_cover_every_candidate_on_the_same_episodes() -> None:
    script = Script().create()
    first, second = script.submit([0], returns=5.0), script.submit([1], program=P2, returns=7.0)
    script.finish([first, second])
    script.validate(first, P1, 5.0)
    script.validate(second, P2, 8.0, indices=(0,))
    script.select(second, [(first, P1, 5.0, 0), (second, P2, 8.0, 0)])
    assert ("validation_incomplete", index_of(script, "candidate-selected")) in rules(script.rows())


def test_validation_of_a_non_candidate_with_another_program_is_reported() -> None:
    script = Script().create()
    first, second = script.submit([0]), script.submit([1], program=P2)
    script.finish([first])
    script.validate(second, P2, 1.0)
    script.validate(first, P2, 1.0, indices=(0,))
    found = dict(rules(script.rows()))
    assert "validation_not_candidate" in found
    assert "validation_wrong_program" in found


def test_assessment_of_anything_but_the_selected_program_is_reported() -> None:
    script = valid_run()
    position = index_of(script, "assessment-finished")
    event = script.events[position]
    assert isinstance(event, AssessmentFinished)
    script.events[position] = event.model_copy(update={"submission_id": "submission-000001", "program_digest": P1})
    assert ("assessment_not_selected", position) in rules(script.rows())


def test_a_run_that_ends_without_its_assessment_is_reported() -> None:
    script = valid_run()
    del script.events[index_of(script, "assessment-finished")]
    assert "assessment_missing" in dict(rules(script.rows()))


def test_nothing_may_follow_the_end_of_a_run() -> None:
    script = valid_run()
    script.events.append(SubmissionRejected(code="session_closed", message="closed", retryable=False))
    assert rules(script.rows()) == [("after_end", len(script.events) - 1)]


def test_evicting_a_permanent_or_the_newest_artifact_is_reported() -> None:
    bulk1, bulk2 = digest_of(b"bulk one"), digest_of(b"bulk two")
    script = Script().create()
    script.submit([0], bulk=bulk1)
    script.submit([1], bulk=bulk2)
    script.events.append(
        BulkEvicted(digests=(bulk1,), submission_ids=("submission-000001",), reason="cap", bytes_freed=20)
    )
    assert fold(script.rows()).ok
    script.events.append(
        BulkEvicted(digests=(bulk2, CONTENT), submission_ids=("submission-000002",), reason="cap", bytes_freed=20)
    )
    found = [rule for rule, _ in rules(script.rows())]
    assert found == ["evicted_newest", "evicted_unpublished"]


def test_the_plan_must_be_fixed_before_the_agent_starts_and_match_the_configuration() -> None:
    script = Script().create()
    script.events.append(EpisodePlanned(split="train", index=6, env_seed=1, policy_seed=2))
    found = dict(rules(script.rows()))
    assert found["plan_after_start"] == len(script.events) - 1
    assert "plan_incomplete" in found


def test_rows_out_of_order_unknown_kinds_and_broken_payloads_are_findings_not_crashes() -> None:
    rows = valid_run().rows()
    seq, kind, version, visibility, _payload = rows[5]
    broken: list[AuditRow] = [
        *rows[:5],
        (seq, kind, version, visibility, b"{not json"),
        (rows[6][0], "made-up-kind", 1, "public", b"{}"),
        (rows[7][0], rows[7][1], rows[7][2], rows[7][3], canonical_json({"unexpected": True})),
        *rows[9:],
    ]
    found = {rule for rule, _ in rules(broken)}
    assert {"payload_unreadable", "unknown_kind", "malformed_event", "seq_order"} <= found


def test_an_empty_log_or_one_without_run_created_is_not_a_run() -> None:
    assert rules([]) == [("run_created_missing", None)]
    rows = valid_run().rows()[1:]
    assert ("run_created_missing", 0) in rules(rows)


def test_violations_are_bounded_and_the_rest_counted() -> None:
    script = valid_run()
    for _ in range(5):
        script.events.append(SubmissionRejected(code="session_closed", message="closed", retryable=False))
    report = fold(script.rows(), max_violations=2)
    assert len(report.violations) == 2
    assert report.violations_omitted == 3
    assert not report.ok


def test_the_best_public_fallback_judges_the_best_published_submission() -> None:
    script = Script(config=_config(fallback="best_public", validation={"episodes": 0, "max_candidates": 1})).create()
    low, high = script.submit([0], returns=2.0), script.submit([1], program=P2, returns=9.0)
    script.events.append(AgentExited(pid=7, exit_code=1, duration_ms=1, reason="exited"))
    script.select(high, [(high, P2, 9.0, 0)])
    script.assess(high, P2)
    script.end(high, reason="agent_exited")
    assert fold(script.rows(), score_direction="maximize").ok
    report = fold(script.rows(), score_direction="minimize")
    assert "selection_candidates_mismatch" in {v.rule for v in report.violations}
    assert low  # the minimizing fallback would have judged the lower score
    unknown = fold(script.rows())
    assert unknown.ok
    assert unknown.direction_needed


def test_judging_without_finish_or_fallback_is_reported() -> None:
    script = Script().create()
    sid = script.submit([0])
    script.validate(sid, P1, 1.0)
    assert "judging_without_finish" in dict(rules(script.rows()))


@given(
    selections=st.lists(st.sets(st.integers(0, 5), min_size=1, max_size=4), min_size=1, max_size=3),
    data=st.data(),
)
@settings(max_examples=50, deadline=None)
def test_random_valid_runs_pass_and_any_dropped_result_is_caught(selections: list[set[int]], data: Any) -> None:
    script = Script(budget=12).create()
    sids = [script.submit(sorted(s), returns=float(n)) for n, s in enumerate(selections)]
    best = sids[-1]
    script.finish([best])
    script.validate(best, P1, 3.0)
    script.select(best, [(best, P1, 3.0, 0)])
    script.assess(best, P1)
    script.end(best)
    report = fold(script.rows())
    assert report.ok, report.violations
    assert report.budget_used == sum(len(s) for s in selections)
    assert report.budget_used + report.budget_left == 12
    results = [i for i, e in enumerate(script.events) if getattr(e, "kind", None) == "episode-finished"]
    del script.events[data.draw(st.sampled_from(results))]
    assert "feedback_before_results" in {v.rule for v in fold(script.rows()).violations}


def test_the_direction_recorded_in_the_benchmark_spec_is_used_first() -> None:
    script = valid_run()
    created = script.events[0]
    assert isinstance(created, RunCreated)
    script.events[0] = created.model_copy(update={"benchmark_spec": {"score_direction": "maximize"}})
    report = fold(script.rows())
    assert report.ok
    assert report.direction_source == "run-created's benchmark_spec"
    contradicted = fold(script.rows(), score_direction="minimize", direction_source="the registry")
    assert ("direction_mismatch", 0) in [(v.rule, v.seq) for v in contradicted.violations]
    script.events[0] = created.model_copy(update={"benchmark_spec": {"score_direction": "minimize"}})
    found = {v.rule for v in fold(script.rows()).violations}
    assert found == {"direction_mismatch", "wrong_selection"}  # the tie-break text and the choice disagree with it


def test_a_failed_request_and_its_internal_error_are_accepted_and_stay_host_only() -> None:
    script = valid_run()
    failed = RequestFailed(method="submit", error_type="KeyError", message="'x'", traceback="Traceback ...")
    told = SubmissionRejected(code="internal_error", message="the Host failed", retryable=False)
    position = index_of(script, "finish-accepted")
    script.events[position:position] = [
        failed,
        told,
        FinishRejected(code="internal_error", message="m", retryable=False),
    ]
    assert fold(script.rows()).ok
    script.events[position] = ("public", failed)
    assert rules(script.rows()) == [("host_fact_public", position)]


def _faulting_submission(script: Script, refunds: list[int], suspicious: list[bool]) -> int:
    """A 4-Episode Submission whose Episodes all end in infra faults refunding ``refunds``; its Feedback's index."""
    sid = script.submit([0, 1, 2, 3])
    first = index_of(script, "episode-finished")
    for n, (units, odd) in enumerate(zip(refunds, suspicious, strict=True)):
        script.events[first + n] = InfraFault(
            submission_id=sid, split="train", indices=(n,), refunded_units=units, reason="worker died", suspicious=odd
        )
    feedback = index_of(script, "feedback-published")
    script.remaining += sum(refunds)
    script.used -= sum(refunds)
    script.events[feedback] = FeedbackPublished(
        submission_id=sid, score=None, content_digest=CONTENT, budget_used=script.used, budget_left=script.remaining
    )
    return feedback


def test_infra_fault_refunds_follow_the_recorded_refund_rule() -> None:
    # minimum 2, fraction 0.1: a 4-Episode Submission of a budget-8 Run gets 2 refunds, then faults are charged.
    rule = {"infra_refunds": {"minimum": 2, "fraction": 0.1}}
    script = Script(config=_config(**rule)).create()
    _faulting_submission(script, [1, 1, 0, 0], [False, False, True, True])
    assert fold(script.rows()).ok, fold(script.rows()).violations
    greedy = Script(config=_config(**rule)).create()
    feedback = _faulting_submission(greedy, [1, 1, 1, 0], [False, False, False, True])
    assert dict(rules(greedy.rows())).get("refund_limit") == feedback - 2  # the third refund breaks the rule
    unmarked = Script(config=_config(**rule)).create()
    feedback = _faulting_submission(unmarked, [1, 1, 0, 0], [False, False, True, False])
    assert dict(rules(unmarked.rows())).get("refund_limit") == feedback - 1  # charged but not reported suspicious
    older = Script().create()  # a Run that records no refund rule (written before there was one) is not held to it
    _faulting_submission(older, [1, 1, 1, 1], [False] * 4)
    assert "refund_limit" not in dict(rules(older.rows()))
