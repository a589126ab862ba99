"""A Benchmark's own default Policy limits (its catalogue row's ``default_limits``): ``run`` and ``evaluate`` use them
where the command line sets none, say so, record them, and a flag the user types wins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from evoledger.kernel.execution import PolicyLimits
from evoledger.kernel.registry import default_registry
from evoledger.ledger import Ledger

_CLI = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()"]
WAREHOUS = "codechef/warehous-warehouseman"


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def _recorded_limits(record: Path, kind: str) -> dict[str, Any]:
    with Ledger.open(record) as ledger:
        (event,) = [r.event for r in ledger.events(kinds=[kind])]
    limits: dict[str, Any] = event.config["limits"]  # type: ignore[attr-defined]
    return limits


def test_every_declared_default_is_a_valid_policy_limit() -> None:
    registry = default_registry()
    declared = {e.name: dict(e.default_limits) for e in registry.entries() if e.default_limits}
    assert declared[WAREHOUS] == {"act_timeout_seconds": 60.0}  # one act() solves the whole case
    for name, limits in declared.items():
        assert set(limits) <= set(PolicyLimits.model_fields), name
        PolicyLimits.model_validate(limits)  # within every bound
    assert not registry.entry("cartpole").default_limits  # the usual 2 s stays the usual


def test_evaluate_uses_the_benchmarks_own_act_timeout_and_a_flag_wins(tmp_path: Path) -> None:
    own = _cli(tmp_path, "evaluate", "-b", WAREHOUS, "-n", "1", "--record-to", "own")
    assert own.returncode == 0, own.stderr
    said = " ".join(own.stderr.split())
    assert f"limits: --act-timeout 60 ({WAREHOUS}'s own defaults; a flag overrides them)" in said
    assert _recorded_limits(tmp_path / "own", "evaluation-started")["act_timeout_seconds"] == 60.0
    typed = _cli(tmp_path, "evaluate", "-b", WAREHOUS, "-n", "1", "--act-timeout", "7", "--record-to", "typed")
    assert typed.returncode == 0, typed.stderr
    assert "own defaults" not in typed.stderr
    assert _recorded_limits(tmp_path / "typed", "evaluation-started")["act_timeout_seconds"] == 7.0
    plain = _cli(tmp_path, "evaluate", "-b", "toy-counter", "-n", "1", "--json")
    assert plain.returncode == 0, plain.stderr
    assert "own defaults" not in plain.stderr


def test_run_records_the_benchmarks_own_act_timeout(tmp_path: Path) -> None:
    small = ["--agent", "baseline", "--episode-budget", "1", "--validation-episodes", "1", "--assessment-episodes", "1"]
    done = _cli(tmp_path, "run", WAREHOUS, *small, "--record-to", "r", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reason"] == "finished"
    assert _recorded_limits(tmp_path / "r", "run-created")["act_timeout_seconds"] == 60.0
