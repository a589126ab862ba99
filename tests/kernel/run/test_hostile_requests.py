"""Hostile Session requests against a real Host: none may crash, stall or bloat it (issue 11, part 2).

Each test runs a real Run (real Host, Unix socket, ledger, executor) whose ``command:`` Agent is a small script
speaking the wire protocol with the standard library, sends one class of hostile request, then carries on
normally. Each checks the answer the Agent got, that the Run went on to ``finished``, what the ledger and the
Agent's ``rejections.json`` kept, and that ``verify`` and ``replay`` pass on the Run left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, RunResult, ValidationConfig, run
from evoledger.kernel.run.resume import resume
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify

# The Agent speaks the protocol itself (importing evoledger costs ~0.7 s per Agent): tests/support/session_call.py.
SUPPORT = Path(__file__).resolve().parents[2] / "support"
PRELUDE = r"""
import json, os, socket, struct, sys, time
WS = os.environ["EVOLEDGER_WORKSPACE"]

sys.path.insert(0, __SUPPORT__)
from session_call import call  # compact JSON, any params

def timed(method, **params):
    began = time.monotonic()
    reply = call(method, **params)
    return {"reply": reply, "seconds": time.monotonic() - began}

def note(name, value):
    with open(os.path.join(WS, "analysis", name), "w") as f:
        json.dump(value, f)
""".replace("__SUPPORT__", repr(str(SUPPORT)))

POLICY = """
def make_policy(context):
    class _Policy:
        def act(self, observation):
            return 0
    return _Policy()
"""

# A Benchmark whose Feedback code fails unexpectedly for the Submission that used pool index 1 (a Host-side bug).
FAULTY_BENCHMARK = """
from evoledger.benchmarks.toy import make_toy_counter

class _Faulty:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def feedback(self, records):
        if any(r.index == 1 for r in records):
            raise KeyError("feedback table has no row 'x' (an injected Host-side bug)")
        return self._inner.feedback(records)

def make(**config):
    return _Faulty(make_toy_counter(**config))
"""


@dataclass(frozen=True)
class AgentRun:
    root: Path
    result: RunResult

    @property
    def run_dir(self) -> Path:
        return self.root / "r"

    def note(self, name: str) -> Any:
        return json.loads((self.run_dir / "workspace" / "analysis" / name).read_text(encoding="utf-8"))

    def payloads(self, kind: str) -> list[bytes]:
        with Ledger.open(self.run_dir) as book:
            return [r.payload for r in book.records(kinds=[kind])]


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="evq-", dir="/tmp"))  # short: Unix socket paths are limited
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run_agent(root: Path, body: str, **config: Any) -> AgentRun:
    script = root / "agent.py"
    script.write_text(PRELUDE + textwrap.dedent(body), encoding="utf-8")
    initial = root / "initial-program"
    initial.mkdir()
    (initial / "policy.py").write_text(POLICY.lstrip(), encoding="utf-8")
    settings: dict[str, Any] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "episode_budget": 4,
        "validation": ValidationConfig(episodes=0),
        "assessment": AssessmentConfig(episodes=0),
        "finish_grace_seconds": 0.5,
        "agent_timeout_seconds": 120.0,
        "agent": AgentConfig(name=f"command:{sys.executable} {script}"),
        **config,
    }
    result = run(RunConfig(**settings), record_to=root / "r", initial_program=initial)
    return AgentRun(root, result)


def _code(reply: dict[str, Any]) -> str | None:
    return None if reply.get("ok") else reply["error"]["code"]


def _check_clean(done: AgentRun) -> None:
    assert verify(done.run_dir).ok
    report = replay(done.run_dir)
    assert report.ok, report.first_failure


# ------------------------------------------------------------------------------------------------ finish


def test_finish_with_hundreds_of_long_unknown_ids_is_a_bounded_rejection(root: Path) -> None:
    done = _run_agent(
        root,
        """
        many = ["submission-" + str(i).zfill(117) for i in range(600)]  # 128 characters each
        note("many.json", call("finish", candidates=many))
        note("some.json", call("finish", candidates=many[:200]))
        call("submit", program="program", episodes="0:1")
        call("finish", candidates=["submission-000001"])
        """,
    )
    many, some = done.note("many.json"), done.note("some.json")
    assert _code(many) == "invalid_request"  # above the protocol's bound on Candidates, refused before any work
    assert "candidates" in many["error"]["message"]
    assert "256" in many["error"]["message"]
    assert _code(some) == "unknown_submission"  # within the bound: the Host decides, with a bounded message
    assert len(some["error"]["message"]) < 2048
    assert "and 195 more" in some["error"]["message"]
    assert done.result.reason == "finished"
    rejected = done.payloads("finish-rejected")
    assert len(rejected) == 1
    assert len(rejected[0]) < 4096
    _check_clean(done)


def test_finish_with_fifty_thousand_duplicate_ids_is_answered_fast(root: Path) -> None:
    done = _run_agent(
        root,
        """
        call("submit", program="program", episodes="0:1")
        note("dup.json", timed("finish", candidates=["submission-000001"] * 50_000))
        call("finish", candidates=["submission-000001"])
        """,
    )
    dup = done.note("dup.json")
    assert _code(dup["reply"]) in ("invalid_request", "duplicate_submission")
    assert dup["seconds"] < 10  # well under any Agent timeout (the quadratic check took ~2 min)
    assert len(dup["reply"]["error"]["message"]) < 2048
    assert done.result.reason == "finished"
    assert all(len(p) < 4096 for p in done.payloads("finish-rejected"))
    _check_clean(done)


# ------------------------------------------------------------------------------------------------ submit


def test_control_characters_in_the_program_path_are_a_clear_rejection(root: Path) -> None:
    done = _run_agent(
        root,
        """
        paths = ["prog\\x00ram", "program\\n", "\\x1b[31mprogram", "pro\\x7fgram", "program/\\x00"]
        note("replies.json", [call("submit", program=p, episodes="0:1") for p in paths])
        note("long.json", [call("submit", program=p, episodes="0:1") for p in ("p" * 300, "a/" * 2000)])
        call("submit", program="program", episodes="0:1")
        call("finish", candidates=["submission-000001"])
        """,
    )
    replies = done.note("replies.json")
    assert [_code(r) for r in replies] == ["invalid_request"] * 5
    for reply in replies:
        assert "control character" in reply["error"]["message"]
    assert "U+0000" in replies[0]["error"]["message"]
    too_long, too_deep = done.note("long.json")  # a 300-byte name (ENAMETOOLONG), a 4000-character path
    assert _code(too_long) == "program_invalid"
    assert "File name too long" in too_long["error"]["message"]
    assert _code(too_deep) == "program_invalid"
    assert done.result.reason == "finished"
    assert done.result.budget_used == 1
    _check_clean(done)


def test_repeated_megabyte_selectors_leave_a_bounded_record(root: Path) -> None:
    done = _run_agent(
        root,
        """
        huge = "0," * 400_000 + "x"  # ~800 kB, inside the 1 MiB frame
        long_program = "p" * 4000
        bad = ",".join(["1", "0"] * 1000)  # 3999 characters: within the selector bound, refused by the Host
        replies = []
        for _ in range(5):
            replies.append(timed("submit", program="program", episodes=huge))
            replies.append(timed("submit", program=long_program, episodes=bad))
        note("replies.json", replies)
        call("submit", program="program", episodes="0:1")
        call("finish", candidates=["submission-000001"])
        """,
    )
    replies = done.note("replies.json")
    assert [_code(r["reply"]) for r in replies] == ["invalid_request"] * 10
    assert all(len(r["reply"]["error"]["message"]) < 2048 for r in replies)
    assert all(r["seconds"] < 10 for r in replies)
    payloads = done.payloads("submission-rejected")
    assert payloads, "the Host's own rejections are recorded"
    assert all(len(p) < 4096 for p in payloads), [len(p) for p in payloads]
    for payload in payloads:
        request = json.loads(payload)["request"]
        assert request["request_hash"].startswith("sha256:")
        assert len(request["request_prefix"]) <= 256
    rejections = done.run_dir / "workspace" / "feedback" / "rejections.json"
    assert rejections.stat().st_size < 64 * 1024
    assert done.result.reason == "finished"
    _check_clean(done)


# ------------------------------------------------------------------------------------------- internal error


def test_an_unexpected_host_error_is_an_internal_error_rejection_and_the_run_goes_on(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "faulty_feedback_benchmark.py").write_text(FAULTY_BENCHMARK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = _run_agent(
        root,
        """
        replies = [call("submit", program="program", episodes="1")]   # the Benchmark's Feedback code raises
        replies.append(call("status"))
        replies.append(call("finish", candidates=["submission-000001"]))  # accepted, but no Feedback
        replies.append(call("submit", program="program", episodes="0"))
        replies.append(call("finish", candidates=["submission-000002"]))
        note("replies.json", replies)
        """,
        benchmark=BenchmarkRef(name="faulty_feedback_benchmark:make"),
    )
    replies = done.note("replies.json")
    assert [_code(r) for r in replies] == ["internal_error", None, "unknown_submission", None, None]
    assert "no published Feedback" in replies[2]["error"]["message"]
    error = replies[0]["error"]
    assert error["retryable"] is False
    assert "KeyError" not in error["message"]  # the Host's own details stay host-only
    assert done.result.reason == "finished"
    (failed,) = done.payloads("request-failed")
    record = json.loads(failed)
    assert record["method"] == "submit"
    assert record["error_type"] == "KeyError"
    assert "injected Host-side bug" in record["message"]
    assert "feedback" in record["traceback"]
    assert len(failed) < 16 * 1024
    with Ledger.open(done.run_dir) as book:
        assert [r.visibility for r in book.records(kinds=["request-failed"])] == ["host"]
    (public,) = (json.loads(p) for p in done.payloads("submission-rejected"))  # what the Agent was told
    assert (public["code"], public["message"]) == ("internal_error", error["message"])
    listed = json.loads((done.run_dir / "workspace" / "feedback" / "rejections.json").read_text())
    assert [r["code"] for r in listed["rejections"]] == ["internal_error", "unknown_submission"]
    assert "KeyError" not in json.dumps(listed)
    _check_clean(done)
    # the record of the failure does not stop the Run from being resumed (it has ended: nothing to do)
    assert resume(done.run_dir).reason == "finished"


DRIVER = """
import sys
from pathlib import Path
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
root = Path(sys.argv[1])
config = RunConfig(
    benchmark=BenchmarkRef(name="faulty_feedback_benchmark:make"),
    episode_budget=6,
    validation=ValidationConfig(episodes=0),
    assessment=AssessmentConfig(episodes=0),
    finish_grace_seconds=0.5,
    agent=AgentConfig(name=f"command:{sys.executable} {root / 'agent.py'}"),
)
run(config, record_to=root / "r", initial_program=root / "initial-program")
"""


def test_resume_after_a_failed_request_goes_on_without_repeating_the_crash(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Host dies right after recording a failed request; resume meets the same failure and goes on."""
    (root / "faulty_feedback_benchmark.py").write_text(FAULTY_BENCHMARK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    (root / "agent.py").write_text(
        PRELUDE
        + textwrap.dedent(
            """
            call("submit", program="program", episodes="1")   # internal_error (the first Host dies here)
            ok = call("submit", program="program", episodes="0")
            call("finish", candidates=[ok["result"]["submission_id"]])
            """
        ),
        encoding="utf-8",
    )
    (root / "initial-program").mkdir()
    (root / "initial-program" / "policy.py").write_text(POLICY.lstrip(), encoding="utf-8")
    (root / "driver.py").write_text(DRIVER, encoding="utf-8")
    env = {**os.environ, "EVOLEDGER_CRASH_AFTER": "request-failed:1"}
    crashed = subprocess.run(
        [sys.executable, str(root / "driver.py"), str(root)], env=env, capture_output=True, text=True, timeout=300
    )
    assert crashed.returncode == -9, crashed.stderr[-2000:]  # SIGKILLed by the crash point
    done = AgentRun(root, resume(root / "r", trust_benchmark=True, trust_agent=True))
    assert done.result.reason == "finished"
    failed = [json.loads(p) for p in done.payloads("request-failed")]
    assert len(failed) == 3  # the live request, its completion on resume, the resumed Agent's retry
    assert {f["error_type"] for f in failed} == {"KeyError"}
    assert len(done.payloads("submission-rejected")) == 2  # the Agent was answered twice (not on completion)
    _check_clean(done)
