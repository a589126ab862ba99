"""Every benchmark script under bench/ still runs (a smoke run at toy sizes; the figures are not checked here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent

SMOKE_RUNS = {
    "ledger_bench.py": (["--events", "3000", "--single", "30"], "append, 1000/transaction"),
    "replay_bench.py": (["--submissions", "6", "--episodes", "5", "--repeat", "1"], "raw sqlite3 read"),
    "evaluate_bench.py": (["--episodes", "3", "--long-episodes", "1"], "Episode"),
    "execution_bench.py": (["--smoke"], "Episode"),
    "stepping_ceiling_bench.py": (["--steps", "1500", "--rounds", "1"], "of the limit"),
    "export_bench.py": (["--steps", "2000", "--repeat", "1"], "steps"),
    "startup_bench.py": (["--quick"], "x bare python"),
    "run_bench.py": (["--repeat", "1", "--quick"], "x python -c pass"),
    "report_bench.py": (["--repeat", "1", "--quick"], "of the run"),
    "visual_evidence_bench.py": (["--episodes", "2", "--steps", "30", "--repeat", "1"], "per Feedback"),
    "trajectory_storage_bench.py": (["--steps", "8", "--episodes", "1", "--repeat", "1"], "bytes/step stored"),
    "image_stepping_bench.py": (["--steps", "60", "--rounds", "1", "--toy-only"], "of in-process"),
    "policy_abi_bench.py": (["--episodes", "1", "--rounds", "1"], "evopolicygym / evoledger"),
    "contest_stepping_bench.py": (["--episodes", "1", "--repeat", "1"], "bytes/step recorded"),
    "ahc054_bench.py": (["--forests", "1", "--rounds", "1", "--turns", "200"], "steps/s"),
    "sweep_bench.py": (["--quick", "--repeat", "1"], "one after another"),
    "ray_bench.py": (["--episodes", "4", "--repeat", "1", "--task-episodes", "0"], "Host ledger"),
}


def test_every_bench_script_has_a_smoke_run() -> None:
    assert sorted(p.name for p in (ROOT / "bench").glob("*_bench.py")) == sorted(SMOKE_RUNS)


@pytest.mark.parametrize("script", sorted(SMOKE_RUNS))
def test_bench_script_runs(script: str) -> None:
    args, expected = SMOKE_RUNS[script]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},  # rich wraps table cells at 80 columns without a terminal
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected in done.stdout
