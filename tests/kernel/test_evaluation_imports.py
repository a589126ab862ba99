"""``evaluate`` starts its workers before the heavy imports: the modules that start them must stay light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "numpy",
    "gymnasium",
    "evoledger.ledger.events",
    "evoledger.ledger.store",
    "evoledger.kernel.evaluation_run",
    "rich",  # the progress bar and the tables: imported once the workers are starting
    "cryptography",  # the signing key of --record-to: likewise
)


@pytest.mark.parametrize("module", ["evoledger.kernel.evaluation", "evoledger.kernel.cli.evaluate_command"])
def test_what_runs_before_the_workers_start_imports_nothing_heavy(module: str) -> None:
    code = f"import json, sys, {module}; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []
