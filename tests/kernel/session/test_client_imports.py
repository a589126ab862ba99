"""``evoledger-session`` starts fast: a whole request imports only the standard library, orjson and our wire code."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

HEAVY = (
    "sqlite_utils",
    "pydantic",
    "gymnasium",
    "numpy",
    "pandas",
    "rich",
    "click",
    "sqlite3",
    "zstandard",
    "cryptography",
)

_ROUND_TRIP = """
import json, sys
from evoledger.kernel.session.client import run
code = run(["status", "--socket", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
ours = sorted(m for m in sys.modules if m.startswith("evoledger"))
print(json.dumps({{"code": code, "heavy": heavy, "ours": ours}}), file=sys.stderr)
"""


def test_a_status_round_trip_imports_nothing_heavy(harness: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _ROUND_TRIP.format(heavy=set(HEAVY)), str(harness.path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert json.loads(done.stdout) == {"budget_remaining": 7}  # it did reach the Host
    assert report["heavy"] == []
    assert not [m for m in report["ours"] if m.endswith((".protocol", ".server", ".store", ".events"))], report["ours"]


def test_importing_the_session_package_imports_none_of_its_modules() -> None:
    code = "import sys, evoledger.kernel.session; print(sorted(m for m in sys.modules if m.startswith(sys.argv[1])))"
    argv = [sys.executable, "-c", code, "evoledger.kernel.session."]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
