"""What the sweep tests share: a scripted Agent whose Run waits for a release file, and a count of a Run's Events."""

from __future__ import annotations

from pathlib import Path

from evoledger.ledger import Ledger

__all__ = ["RELEASED_AGENT", "count_events"]

_SUPPORT = Path(__file__).resolve().parent  # session_call.py

RELEASED_AGENT = f"""
import os, sys, time
sys.path.insert(0, {str(_SUPPORT)!r})
from session_call import call
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
known = call("status")["result"]["submissions"]
if known:
    chosen = known[0]["submission_id"]
else:
    chosen = call("submit", program="program", episodes="0:2")["result"]["submission_id"]
call("finish", candidates=[chosen])
"""
"""An Agent script (``agent.py RELEASE_FILE``): waits for the release file, then submits on 0:2 and finishes;
restarted by ``resume``, it finishes with what is there. So a test's kill never races the Run's end."""


def count_events(run_dir: Path, kind: str) -> int:
    """How many ``kind`` Events the Run in ``run_dir`` has recorded so far (0 while its ledger is being created)."""
    if not (run_dir / "ledger.sqlite").is_file():
        return 0
    try:
        with Ledger.open(run_dir) as ledger:
            return sum(1 for _ in ledger.records(kinds=[kind]))
    except Exception:  # being created: look again
        return 0
