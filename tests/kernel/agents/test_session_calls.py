"""The built-in agents' session client: reply parsing, status limits, batch planning, feedback reading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evoledger.kernel.agents.builtin import SessionCaller, SessionLimits, format_range, read_feedback, session_argv
from evoledger.ledger.errors import InfraError, InputError
from hypothesis import given, settings
from hypothesis import strategies as st


def _caller(tmp_path: Path, code: str) -> SessionCaller:
    return SessionCaller(tmp_path, argv=[sys.executable, "-c", code])


def test_accepted_reply_parses_stdout(tmp_path: Path) -> None:
    reply = _caller(tmp_path, "import json,sys; print(json.dumps({'args': sys.argv[1:]}))").submit("program", "0:3")
    assert reply.ok
    assert reply.data == {"args": ["submit", "program", "--episodes", "0:3"]}
    assert reply.describe() == "ok"


def test_rejection_parses_the_error_from_stderr(tmp_path: Path) -> None:
    code = (
        "import json,sys; print(json.dumps({'error': {'code': 'budget_exhausted', 'message': 'no budget', "
        "'retryable': True}}), file=sys.stderr); sys.exit(1)"
    )
    reply = _caller(tmp_path, code).finish(["submission-000001"])
    assert not reply.ok
    assert reply.retryable
    assert reply.describe() == "budget_exhausted: no budget"
    with pytest.raises(InfraError, match="refused 'status'"):
        _caller(tmp_path, code).status()


def test_client_errors_and_garbage_raise(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="failed with exit 2"):
        _caller(tmp_path, "import sys; print('bad selector', file=sys.stderr); sys.exit(2)").call("status")
    with pytest.raises(InfraError, match="not JSON"):
        _caller(tmp_path, "print('hello')").call("status")
    with pytest.raises(InfraError, match="cannot run the session command"):
        SessionCaller(tmp_path, argv=[str(tmp_path / "missing")]).call("status")


def test_session_argv_prefers_the_executable_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "evoledger-session"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert session_argv() == [str(exe)]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert session_argv() == [sys.executable, "-m", "evoledger.kernel.session.client"]


def test_limits_from_the_host_status_shape() -> None:
    status = {
        "budget_total": 100,
        "budget_left": 40,
        "submissions_left": 7,
        "pool_size": 32,
        "max_episodes_per_submission": 8,
        "max_candidates": 3,
        "finish_budget_policy": "require_budget_exhaustion",
        "finished": False,
        "submissions": [],
    }
    limits = SessionLimits.from_status(status)
    assert limits == SessionLimits(40, 7, 32, 8, 3, "require_budget_exhaustion", True, False)
    assert limits.per_submission_cap == 8
    minimal = SessionLimits.from_status({"limits": {"budget_left": 5, "pool_size": 3}, "score_direction": "minimize"})
    assert minimal == SessionLimits(5, 5, 3, 3, 1, "allow_early", False, False)


def test_limits_after_a_submission() -> None:
    limits = SessionLimits(40, 7, 32, 8, 3, "allow_early", True)
    after = limits.after_submission({"submission_id": "submission-000001", "budget_left": 32, "submissions_left": 6})
    assert after == SessionLimits(32, 6, 32, 8, 3, "allow_early", True)
    assert limits.after_submission({"submission_id": "submission-000001", "score": 1.0}) is None


def test_limits_errors() -> None:
    with pytest.raises(InfraError, match="lacks 'budget_left'"):
        SessionLimits.from_status({"pool_size": 3})
    with pytest.raises(InfraError, match="should be an integer"):
        SessionLimits.from_status({"budget_left": "many", "pool_size": 3})
    with pytest.raises(InfraError, match="unknown finish budget policy"):
        SessionLimits.from_status({"budget_left": 1, "pool_size": 3, "finish_budget_policy": "later"})


@settings(max_examples=100, deadline=None)
@given(
    budget=st.integers(0, 200),
    subs=st.integers(0, 40),
    pool=st.integers(1, 50),
    max_eps=st.integers(1, 50),
    preferred=st.integers(1, 20),
)
def test_batches_spend_the_whole_budget_whenever_that_is_possible(
    budget: int, subs: int, pool: int, max_eps: int, preferred: int
) -> None:
    spent, left_subs, used_subs = 0, subs, 0
    cap = min(pool, max_eps)
    while True:
        limits = SessionLimits(budget - spent, left_subs, pool, max_eps, 1, "require_budget_exhaustion", True)
        size = limits.batch_size(preferred)
        if size == 0:
            break
        assert 1 <= size <= min(cap, budget - spent)
        spent += size
        left_subs -= 1
        used_subs += 1
    assert used_subs <= subs
    if budget <= subs * cap:
        assert spent == budget


def test_format_range_and_feedback_reading(tmp_path: Path) -> None:
    assert format_range(0, 5) == "0:5"
    with pytest.raises(InputError, match="0 <= start < stop"):
        format_range(3, 3)
    assert read_feedback(tmp_path) == {}
    fb = tmp_path / "feedback"
    for sid, score in (("submission-000002", 3.0), ("submission-000001", 1.0)):
        (fb / sid).mkdir(parents=True)
        (fb / sid / "feedback.json").write_text(json.dumps({"submission_id": sid, "score": score}))
    (fb / "broken").mkdir()
    (fb / "broken" / "feedback.json").write_text("{not json")
    (fb / "latest.json").write_text("{}")
    found = read_feedback(tmp_path)
    assert list(found) == ["submission-000001", "submission-000002"]
    assert found["submission-000002"]["score"] == 3.0
