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


def test_hill_climb_screens_on_matched_episodes_and_finishes_with_its_confirmed_best(fake_session: Any) -> None:
    fake_session.configure(budget=40, pool_size=10, max_eps=5, max_candidates=2)
    exit_ = fake_session.run_agent("hill-climb", seed=3)
    log = exit_.stdout_path.read_text()
    assert exit_.exit_code == 0, log + exit_.stderr_path.read_text()
    calls = fake_session.calls()
    selectors = [c[3] for c in _submit_calls(calls)]
    assert set(selectors) == {"0:2", "2:7"}  # screening on 0:2, confirmation on 2:7 (at most 5 per submission)
    assert calls.count(["status"]) == 1  # the submit replies carry the budget and submissions left
    subs = fake_session.submissions()
    assert subs[0]["params"] == {"a": 0.0, "b": 0.0, "c": 0.0}  # the initial Program goes first
    screened = [s for s in subs if s["indices"] == [0, 1]]
    confirmed = [s for s in subs if s["indices"] == [2, 3, 4, 5, 6]]
    assert len({json.dumps(s["params"], sort_keys=True) for s in screened}) == len(screened)  # always a new point
    assert len(confirmed) == 2
    target = fake_session.state()["target"]
    assert max(s["score"] for s in subs) > _score(subs[0]["params"], target)  # it improved
    best_screened = max(screened, key=lambda s: s["score"])
    assert best_screened["params"] in [c["params"] for c in confirmed]  # its best screening was confirmed
    finished = fake_session.state()["finished"]
    assert len(finished) == 2
    assert {json.dumps(_params_of(subs, sid), sort_keys=True) for sid in finished} == {
        json.dumps(c["params"], sort_keys=True) for c in confirmed
    }  # it finishes with exactly the confirmed candidates
    written = json.loads((fake_session.workspace / "program" / "params.json").read_text())
    assert written == _params_of(subs, finished[0])
    assert fake_session.state()["used"] <= 40
    state = json.loads((fake_session.workspace / "analysis" / "agent-state.json").read_text())
    assert [e["submission_id"] for e in state["history"]] == [s["id"] for s in subs]
    assert state["finished"] == finished
    assert state["pending"] is None
    assert "tuning the 3 parameters of program/params.json" in log
    assert f"finished with {finished}" in log


def _params_of(subs: list[dict[str, Any]], sid: str) -> dict[str, float]:
    return next(s["params"] for s in subs if s["id"] == sid)


def test_hill_climb_restart_continues_exactly_where_it_stopped(fake_session: Any, tmp_path: Path) -> None:
    settings = {"budget": 30, "pool_size": 10, "max_eps": 5, "max_candidates": 1}
    fake_session.configure(**settings)
    reference = fake_session.run_agent("hill-climb", seed=7)
    assert reference.exit_code == 0
    expected = [(s["params"], s["indices"]) for s in fake_session.submissions()]
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
    assert [(s["params"], s["indices"]) for s in fake_session.submissions()] == expected
    assert _finish_calls(fake_session.calls()) == expected_finish


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


def test_hill_climb_spends_the_whole_budget_when_the_run_requires_it(fake_session: Any) -> None:
    fake_session.configure(
        budget=23, pool_size=10, max_eps=5, max_submissions=5, policy="require_budget_exhaustion", max_candidates=3
    )
    exit_ = fake_session.run_agent("hill-climb")
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    state = fake_session.state()
    assert state["used"] == 23
    assert len(state["submissions"]) <= 5
    assert 1 <= len(state["finished"]) <= 3


def test_hill_climb_asks_for_the_limits_when_the_replies_do_not_carry_them(fake_session: Any) -> None:
    fake_session.configure(budget=12, pool_size=10, max_eps=10, reply_limits=False)
    assert fake_session.run_agent("hill-climb").exit_code == 0
    calls = fake_session.calls()
    assert calls.count(["status"]) == len(_submit_calls(calls)) + 1


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


def test_hill_climb_stops_once_its_confirmed_candidate_reaches_the_declared_target(fake_session: Any) -> None:
    fake_session.configure(budget=40, max_candidates=1, target={"a": 0.0, "b": 0.0, "c": 0.0})
    spec = {"observation_space": {}, "action_space": {}, "metadata": {"gymnasium_reward_threshold": -0.01}}
    exit_ = fake_session.run_agent("hill-climb", spec=spec)
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    assert [c[3] for c in _submit_calls(fake_session.calls())] == ["0:2", "2:7"]  # screened, confirmed, done
    assert fake_session.state()["finished"] == ["submission-000001"]
    assert "1 confirmed candidates reach the target score -0.01" in exit_.stdout_path.read_text()


def test_hill_climb_writes_a_generic_tabular_family_when_the_program_has_no_params(fake_session: Any) -> None:
    (fake_session.workspace / "program" / "params.json").unlink()
    fake_session.configure(budget=6, scorer="sum")
    spec = {"observation_space": {"type": "Discrete", "n": 3, "start": 0}, "action_space": {"type": "Discrete", "n": 2}}
    exit_ = fake_session.run_agent("hill-climb", spec=spec)
    log = exit_.stdout_path.read_text()
    assert exit_.exit_code == 0, log
    assert "tuning the generic tabular family (3 states x 2 actions, 6 parameters)" in log
    params = fake_session.submissions()[0]["params"]
    assert params == {f"q{s}_{a}": 0.0 for s in range(3) for a in range(2)}
    policy = (fake_session.workspace / "program" / "policy.py").read_text()
    assert "A generic parameterised Policy" in policy
    assert fake_session.state()["finished"]


def test_hill_climb_without_params_or_a_family_submits_the_program_unchanged(fake_session: Any) -> None:
    (fake_session.workspace / "program" / "params.json").unlink()
    spec = {"observation_space": {"type": "Discrete", "n": 3}, "action_space": {"type": "MultiBinary", "n": [2]}}
    exit_ = fake_session.run_agent("hill-climb", spec=spec)
    log = exit_.stdout_path.read_text()
    assert exit_.exit_code == 0, log
    assert "no generic family" in log
    assert fake_session.state()["finished"] == ["submission-000001"]


@pytest.mark.slow
def test_hill_climb_balances_the_cartpole_linear_program_within_100_episodes(fake_session: Any) -> None:
    program = Path(__file__).resolve().parents[3] / "benchmarks" / "programs" / "cartpole-linear"
    for name in ("policy.py", "params.json"):
        shutil.copy(program / name, fake_session.workspace / "program" / name)
    fake_session.configure(scorer="cartpole", budget=100, pool_size=20, max_eps=10, max_submissions=100)
    spec = {"observation_space": {}, "action_space": {}, "metadata": {"gymnasium_reward_threshold": 475.0}}
    exit_ = fake_session.run_agent("hill-climb", seed=0, spec=spec)
    assert exit_.exit_code == 0, exit_.stdout_path.read_text()
    subs = fake_session.submissions()
    assert subs[0]["score"] < 15  # all-zero weights always push left: the pole falls at once
    confirmed = [s for s in subs if s["indices"] == list(range(2, 10))]
    assert confirmed
    assert max(s["score"] for s in confirmed) >= 475, [s["score"] for s in subs]
    assert fake_session.state()["used"] < 100  # it stopped once two candidates were confirmed
