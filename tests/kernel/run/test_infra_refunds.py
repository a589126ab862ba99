"""Infra-fault refunds are bounded: a Policy that kills its worker cannot buy free Episodes or sink a Run.

With the local backend a Policy can kill its own worker, and the Episode then looks like an infra fault.
Refunds are bounded by ``projections.refunds`` (``RunConfig.infra_refunds``): past the limit the Submission
is charged and the fault is public as ``suspicious``; the protocol audit of ``replay`` applies the same rule.
In Validation a Candidate that keeps faulting is scored as failing those Episodes, and the Run still selects
and assesses (before: every fault was refunded, and Validation ended the Run as ``validation_failed``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.events import (
    AssessmentFinished,
    CandidateSelected,
    EventBase,
    InfraFault,
    RunEnded,
    SubmissionAccepted,
    ValidationEpisodeFinished,
)
from evoledger.ledger.store import Ledger
from evoledger.projections.refunds import RefundRule
from evoledger.tests.support.hostile_programs import KILL_WORKER_GROUP

SUPPORT = Path(__file__).resolve().parents[2] / "support"

HONEST = """
class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    return _Policy()
"""


PRELUDE = """
import os, sys
sys.path.insert(0, SUPPORT)
from session_call import call

def write_program(source):
    with open(os.path.join(os.environ["EVOLEDGER_WORKSPACE"], "program", "policy.py"), "w") as f:
        f.write(source)
"""


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are limited
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run(root: Path, body: str, **settings: Any) -> list[EventBase]:
    script = root / "agent.py"
    constants = f"SUPPORT = {str(SUPPORT)!r}\nHONEST = {HONEST!r}\nKILLER = {KILL_WORKER_GROUP!r}\n"
    script.write_text(constants + PRELUDE + textwrap.dedent(body), encoding="utf-8")
    initial = root / "initial-program"
    initial.mkdir()
    (initial / "policy.py").write_text(HONEST.lstrip(), encoding="utf-8")
    config: dict[str, Any] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "finish_grace_seconds": 0.5,
        # the local backend: under bwrap a Policy cannot reach its worker (tests/kernel/execution/test_isolation.py)
        "isolation": "local",
        "agent": AgentConfig(name=f"command:{sys.executable} {script}"),
        **settings,
    }
    result = run(RunConfig(**config), record_to=root / "r", initial_program=initial)
    assert result.reason == "finished", result
    report = replay(root / "r")
    assert report.exit_code == 0, report.to_json()  # the audit re-derives the same refunds from the log
    with Ledger.open(root / "r") as book:
        return [r.event for r in book.events()]


def test_a_policy_that_kills_its_worker_gets_at_most_the_refund_limit_and_is_then_charged(root: Path) -> None:
    body = """
    write_program(KILLER)
    first = call("submit", program="program", episodes="0:5")["result"]
    second = call("submit", program="program", episodes=f"0:{first['budget_left']}")["result"]
    call("finish", candidates=[first["submission_id"]])
    """
    events = _run(
        root,
        body,
        episode_budget=6,
        validation=ValidationConfig(episodes=0),
        assessment=AssessmentConfig(episodes=0),
    )
    faults = [e for e in events if isinstance(e, InfraFault)]
    limit = RefundRule().limit(6)
    assert limit == 2
    assert sum(f.refunded_units for f in faults) == limit  # before the fix: every one of them was refunded
    assert [f.refunded_units for f in faults][:limit] == [1] * limit
    charged = faults[limit:]
    assert charged
    assert all(f.suspicious and f.refunded_units == 0 for f in charged)
    assert all("suspicious" in f.reason for f in charged)
    accepted = [e for e in events if isinstance(e, SubmissionAccepted)]
    assert accepted[1].budget_before == 6 - 5 + limit  # what came back is exactly the refunded units
    ended = next(e for e in events if isinstance(e, RunEnded))
    assert ended.summary["budget_left"] == 0


def test_a_candidate_that_kills_its_worker_in_validation_is_scored_as_failing_and_the_run_goes_on(
    root: Path,
) -> None:
    body = """
    honest = call("submit", program="program", episodes="0:1")["result"]["submission_id"]
    write_program(KILLER)
    killer = call("submit", program="program", episodes="1:2")["result"]["submission_id"]
    call("finish", candidates=[killer, honest])
    """
    events = _run(
        root,
        body,
        episode_budget=4,
        validation=ValidationConfig(episodes=3, max_candidates=2),
        assessment=AssessmentConfig(episodes=2),
    )
    validation = [e for e in events if isinstance(e, ValidationEpisodeFinished)]
    killer = [e for e in validation if e.submission_id == "submission-000002"]
    assert len(killer) == 3
    assert all(e.status == "exception" for e in killer)
    assert all(e.failure is not None and "infra fault" in e.failure.message for e in killer)
    selected = next(e for e in events if isinstance(e, CandidateSelected))
    assert selected.submission_id == "submission-000001"
    assessed = [e for e in events if isinstance(e, AssessmentFinished)]
    assert len(assessed) == 1
    assert assessed[0].episode_count == 2
