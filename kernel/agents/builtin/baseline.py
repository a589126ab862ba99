"""The built-in ``baseline`` agent: submit the Program unchanged, then finish with that submission.

Run as ``python -m evoledger.kernel.agents.builtin.baseline`` in the workspace. It submits ``program`` once on
``0:n`` with ``n = min(budget left, pool size, max Episodes per submission)``. Under the
``require_budget_exhaustion`` finish policy it resubmits the same Program until the budget is spent. It finishes
with its first submission. After a restart, Feedback already in ``feedback/`` counts as its own submissions, so
it does not submit again unless the finish policy still requires spending budget.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from evoledger.kernel.agents.builtin.session_calls import (
    SessionCaller,
    SessionLimits,
    format_range,
    log,
    read_feedback,
)
from evoledger.ledger.errors import EvoLedgerError

__all__ = ["main", "run_baseline"]


def run_baseline(workspace: Path, caller: SessionCaller) -> int:
    """Submit (if needed) and finish; returns the process exit code."""
    submitted = sorted(read_feedback(workspace))
    if submitted:
        log(f"found Feedback for {submitted}: not submitting the same Program again")
    while True:
        limits = SessionLimits.from_status(caller.status())
        if limits.finished:
            log("the Session is already finished; nothing to do")
            return 0
        must_spend = limits.finish_policy == "require_budget_exhaustion" and limits.budget_left > 0
        if submitted and not must_spend:
            break
        size = limits.batch_size(limits.per_submission_cap)
        if size == 0:
            break
        selector = format_range(0, size)
        reply = caller.submit("program", selector)
        if not reply.ok:
            log(f"submission refused ({reply.describe()})")
            break
        submission_id = str(reply.data["submission_id"])
        submitted.append(submission_id)
        log(f"{submission_id} episodes {selector} score {reply.data.get('score')}")
    if not submitted:
        log("no submission was accepted; nothing to finish with")
        return 1
    reply = caller.finish([submitted[0]])
    if not reply.ok:
        log(f"finish refused ({reply.describe()})")
        return 1
    log(f"finished with {submitted[0]}")
    return 0


def main() -> int:
    workspace = Path(os.environ.get("EVOLEDGER_WORKSPACE", ".")).resolve()
    log(f"baseline agent: workspace {workspace}")
    try:
        return run_baseline(workspace, SessionCaller(workspace))
    except EvoLedgerError as exc:
        log(f"baseline agent stopped: {exc}")
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
