"""The built-in agents run as real processes against a fake ``evoledger-session`` (see conftest.py)."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest


def _score(params: dict[str, float], target: dict[str, float]) -> float:
    return -sum((params[k] - target[k]) ** 2 for k in sorted(params))


def _submit_calls(calls: list[list[str]]) -> list[list[str]]:
    return [c for c in calls if c[0] == "submit"]


def _finish_calls(calls: list[list[str]]) -> list[list[str]]:
    return [c for c in calls if c[0] == "finish"]


def _ranked(submissions: list[dict[str, Any]]) -> list[str]:
    return [s["id"] for s in sorted(submissions, key=lambda s: (-s["score"], s["id"]))]


# ------------------------------------------------------------------------------------------------ baseline


def test_baseline_submits_once_and_finishes_with_it(fake_session: Any) -> None:
    fake_session.configure(budget=8, pool_size=6, max_eps=4)
    exit_ = fake_session.run_agent("baseline")
    assert exit_.exit_code == 0, exit_.stdout_path.read_text() + exit_.stderr_path.read_text()
    calls = fake_session.calls()
    assert _submit_calls(calls) == [["submit", "program", "--episodes", "0:4"]]
    assert _finish_calls(calls) == [["finish", "submission-000001"]]
    assert calls[0] == ["status"]
    assert fake_session.state()["finished"] == ["submission-000001"]
    assert "finished with submission-000001" in exit_.stdout_path.read_text()


def test_baseline_spends_the_whole_budget_when_the_run_requires_it(fake_session: Any) -> None:
    fake_session.configure(budget=10, pool_size=4, max_eps=4, max_submissions=3, policy="require_budget_exhaustion")
    exit_ = fake_session.run_agent("baseline")
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    selectors = [c[3] for c in _submit_calls(fake_session.calls())]
    assert selectors == ["0:4", "0:4", "0:2"]
    state = fake_session.state()
    assert state["used"] == 10
    assert state["finished"] == ["submission-000001"]


def test_baseline_after_restart_reuses_existing_feedback(fake_session: Any) -> None:
    fake_session.configure(budget=8, pool_size=6, max_eps=4)
    assert fake_session.run_agent("baseline").exit_code == 0
    fake_session.configure(finished=None, calls=[])  # a Host restart before finish was recorded
    exit_ = fake_session.run_agent("baseline")
    assert exit_.exit_code == 0
    assert _submit_calls(fake_session.calls()) == []
    assert _finish_calls(fake_session.calls()) == [["finish", "submission-000001"]]


def test_baseline_exits_quietly_when_the_session_is_already_finished(fake_session: Any) -> None:
    fake_session.configure(finished=["submission-000001"])
    exit_ = fake_session.run_agent("baseline")
    assert exit_.exit_code == 0
    assert fake_session.calls() == [["status"]]


def test_baseline_reports_failure_when_nothing_can_be_submitted(fake_session: Any) -> None:
    fake_session.configure(budget=0)
    exit_ = fake_session.run_agent("baseline")
    assert exit_.exit_code == 1
    assert "nothing to finish with" in exit_.stdout_path.read_text()


# ---------------------------------------------------------------------------------------------- hill-climb


def test_hill_climb_spends_the_budget_and_finishes_with_its_best(fake_session: Any) -> None:
    fake_session.configure(budget=40, pool_size=10, max_eps=5, max_candidates=2)
    exit_ = fake_session.run_agent("hill-climb", seed=3)
    log = exit_.stdout_path.read_text()
    assert exit_.exit_code == 0, log + exit_.stderr_path.read_text()
    calls = fake_session.calls()
    submits = _submit_calls(calls)
    # batches of PREFERRED_BATCH (3) until the last unit of budget: 13 x 3 + 1 = 40
    assert submits == [["submit", "program", "--episodes", "0:3"]] * 13 + [["submit", "program", "--episodes", "0:1"]]
    assert calls.count(["status"]) == 1  # the submit replies carry the budget and submissions left
    subs = fake_session.submissions()
    assert subs[0]["params"] == {"a": 0.0, "b": 0.0, "c": 0.0}  # the initial Program goes first
    assert len({json.dumps(s["params"], sort_keys=True) for s in subs}) == 14  # every later one is a new point
    target = fake_session.state()["target"]
    assert max(s["score"] for s in subs) > _score(subs[0]["params"], target)  # it improved
    best_two = _ranked(subs)[:2]
    assert _finish_calls(calls) == [["finish", *best_two]]
    best = next(s for s in subs if s["id"] == best_two[0])
    written = json.loads((fake_session.workspace / "program" / "params.json").read_text())
    assert written == best["params"]
    state = json.loads((fake_session.workspace / "analysis" / "agent-state.json").read_text())
    assert [e["submission_id"] for e in state["history"]] == [s["id"] for s in subs]
    assert state["finished"] == best_two
    assert state["pending"] is None
    assert "submission-000014 episodes 0:1" in log
    assert f"finished with {best_two}" in log


def test_hill_climb_restart_continues_exactly_where_it_stopped(fake_session: Any, tmp_path: Path) -> None:
    settings = {"budget": 30, "pool_size": 10, "max_eps": 5, "max_candidates": 1}
    fake_session.configure(**settings)
    reference = fake_session.run_agent("hill-climb", seed=7)
    assert reference.exit_code == 0
    expected = [s["params"] for s in fake_session.submissions()]
    expected_finish = _finish_calls(fake_session.calls())

    # Same Run again from scratch, but the agent is killed right after its 3rd submission is accepted,
    # before it could record the reply: its state only knows the submission as pending.
    shutil.rmtree(fake_session.workspace / "feedback")
    (fake_session.workspace / "feedback").mkdir()
    (fake_session.workspace / "analysis" / "agent-state.json").unlink()
    (fake_session.workspace / "program" / "params.json").write_text(json.dumps({"a": 0.0, "b": 0.0, "c": 0.0}))
    fake_session.configure(used=0, calls=[], submissions=[], finished=None, crash_after_submit=3)
    crashed = fake_session.run_agent("hill-climb", seed=7)
    assert crashed.signal == signal.SIGKILL
    state = json.loads((fake_session.workspace / "analysis" / "agent-state.json").read_text())
    assert len(state["history"]) == 2
    assert state["pending"] is not None

    restarted = fake_session.run_agent("hill-climb", seed=7)
    log = restarted.stdout_path.read_text()
    assert restarted.exit_code == 0, log
    assert "matched the pending submission to submission-000003" in log
    assert [s["params"] for s in fake_session.submissions()] == expected
    assert _finish_calls(fake_session.calls()) == expected_finish
    assert fake_session.state()["used"] == 30


def test_hill_climb_seed_changes_the_proposals(fake_session: Any) -> None:
    fake_session.configure(budget=10, max_eps=5)
    assert fake_session.run_agent("hill-climb", seed=1).exit_code == 0
    first = fake_session.submissions()[1]["params"]
    shutil.rmtree(fake_session.workspace / "feedback")
    (fake_session.workspace / "feedback").mkdir()
    (fake_session.workspace / "analysis" / "agent-state.json").unlink()
    (fake_session.workspace / "program" / "params.json").write_text(json.dumps({"a": 0.0, "b": 0.0, "c": 0.0}))
    fake_session.configure(used=0, calls=[], submissions=[], finished=None)
    assert fake_session.run_agent("hill-climb", seed=2).exit_code == 0
    assert fake_session.submissions()[1]["params"] != first


def test_hill_climb_respects_budget_exhaustion_rules(fake_session: Any) -> None:
    fake_session.configure(
        budget=23, pool_size=10, max_eps=5, max_submissions=5, policy="require_budget_exhaustion", max_candidates=3
    )
    exit_ = fake_session.run_agent("hill-climb")
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    # 23 Episodes in 5 submissions: raised above the preferred 3 so that exhaustion stays possible
    assert [c[3] for c in _submit_calls(fake_session.calls())] == ["0:5", "0:5", "0:5", "0:4", "0:4"]
    state = fake_session.state()
    assert state["used"] == 23
    assert state["finished"] == _ranked(fake_session.submissions())[:3]


def test_hill_climb_spreads_the_budget_over_few_submissions(fake_session: Any) -> None:
    fake_session.configure(budget=30, pool_size=10, max_eps=10, max_submissions=3, reply_limits=False)
    assert fake_session.run_agent("hill-climb").exit_code == 0
    calls = fake_session.calls()
    assert [c[3] for c in _submit_calls(calls)] == ["0:10", "0:10", "0:10"]
    assert calls.count(["status"]) == 4  # without limits in the submit replies it asks before each step


def test_hill_climb_counts_feedback_it_did_not_make_as_a_candidate(fake_session: Any) -> None:
    fake_session.configure(budget=5, max_eps=5, max_candidates=1, target={"a": 0.0, "b": 0.0, "c": 0.0})
    assert fake_session.run_agent("baseline").exit_code == 0  # submission-000001: the exact optimum
    fake_session.configure(finished=None, budget=15)
    exit_ = fake_session.run_agent("hill-climb")
    log = exit_.stdout_path.read_text()
    assert exit_.exit_code == 0, log
    assert "found Feedback for submission-000001 (not made by this agent)" in log
    assert fake_session.state()["finished"] == ["submission-000001"]


def test_hill_climb_needs_numeric_params(fake_session: Any) -> None:
    (fake_session.workspace / "program" / "params.json").write_text(json.dumps({"a": "x"}))
    exit_ = fake_session.run_agent("hill-climb")
    assert exit_.exit_code == 2
    assert "are not numbers" in exit_.stdout_path.read_text()
    assert _submit_calls(fake_session.calls()) == []


@pytest.mark.slow
def test_hill_climb_improves_the_cartpole_linear_program_within_100_episodes(fake_session: Any) -> None:
    program = Path(__file__).resolve().parents[3] / "benchmarks" / "programs" / "cartpole-linear"
    for name in ("policy.py", "params.json"):
        shutil.copy(program / name, fake_session.workspace / "program" / name)
    fake_session.configure(scorer="cartpole", budget=100, pool_size=20, max_eps=5, max_submissions=100)
    exit_ = fake_session.run_agent("hill-climb", seed=0)
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    scores = [s["score"] for s in fake_session.submissions()]
    assert len(scores) == 34  # 33 batches of 3 and a last single Episode
    assert scores[0] < 15  # all-zero weights always push left: the pole falls at once
    assert max(scores) >= 150, scores
