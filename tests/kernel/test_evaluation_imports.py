"""``evaluate`` starts its workers before the heavy imports: the modules that start them must stay light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


_EVALUATE_THEN_LIST_MODULES = """
import contextlib, json, sys
from evoledger.kernel.cli import main
sys.argv = ["evoledger", "evaluate", *sys.argv[1:]]
with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):
    main()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "cryptography")))
"""


def test_an_evaluation_that_records_nothing_never_imports_cryptography(tmp_path: Path) -> None:
    """Only a record kept with --record-to is signed: a plain ``evoledger evaluate`` does not pay for the key."""
    argv = [sys.executable, "-c", _EVALUATE_THEN_LIST_MODULES, "-n", "1", "--isolation", "local", "--json"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert '"episodes"' in done.stderr  # the evaluation ran (its JSON went to stderr here)
    assert json.loads(done.stdout) == []
