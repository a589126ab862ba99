"""``--isolation`` on evaluate / run / resume / replay: the choice used is printed and recorded (resolved, never
``auto``); an explicit ``bwrap`` that cannot work is a usage error with the install hint; ``auto`` falls back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.execution.isolation import probe_bwrap

SMALL = ["--validation-episodes", "0", "--assessment-episodes", "2", "--episode-budget", "4"]
_BWRAP, _WHY_NOT = probe_bwrap()


def _recorded_config(record: Path, kind: str) -> dict[str, object]:
    with sqlite3.connect(f"file:{record / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        (payload,) = db.execute("SELECT payload FROM events WHERE kind = ?", (kind,)).fetchone()
    config = json.loads(payload)["config"]
    assert isinstance(config, dict)
    return config


@pytest.mark.parametrize("command", ["evaluate", "run", "replay"])
def test_explicit_bwrap_without_bubblewrap_is_a_usage_error_with_the_install_hint(
    command: str, cwd: Path, no_bwrap: None
) -> None:
    args = {
        "evaluate": ["evaluate", "-n", "1", "--isolation", "bwrap"],
        "run": ["run", "--agent", "baseline", *SMALL, "--record-to", "runs/x", "--isolation", "bwrap"],
        "replay": ["replay", str(cwd), "--execute", "--isolation", "bwrap"],
    }[command]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "bwrap is not installed" in result.output
    assert "apt-get install bubblewrap" in result.output
    assert not (cwd / "runs").exists()


def test_auto_without_bubblewrap_falls_back_to_local_says_why_and_records_local(cwd: Path, no_bwrap: None) -> None:
    result = CliRunner().invoke(cli, ["evaluate", "-n", "1", "--record-to", "rec"])
    assert result.exit_code == 0, result.output
    assert "isolation: local (auto: bwrap unavailable: bwrap is not installed)" in result.output
    assert _recorded_config(cwd / "rec", "evaluation-started")["isolation"] == "local"


@pytest.mark.skipif(_BWRAP is None, reason=f"bubblewrap is not usable here: {_WHY_NOT}")
def test_a_run_records_the_resolved_isolation_and_resume_and_replay_accept_an_override(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/r"])
    assert result.exit_code == 0, result.output
    assert "isolation: bwrap" in result.output
    assert _recorded_config(cwd / "runs" / "r", "run-created")["isolation"] == "bwrap"
    again = CliRunner().invoke(cli, ["resume", "runs/r", "--isolation", "local"])
    assert again.exit_code == 0, again.output
    assert "isolation: local (--isolation local: the recorded Programs run unsandboxed)" in again.output
    for isolation in ("bwrap", "local"):  # the same trajectories under either backend
        replayed = CliRunner().invoke(cli, ["replay", "runs/r", "--execute", "--isolation", isolation, "--json"])
        assert replayed.exit_code == 0, replayed.output
        assert json.loads(replayed.output)["ok"] is True


@pytest.mark.parametrize("command", ["replay", "resume"])
def test_recorded_programs_run_sandboxed_or_not_at_all_unless_the_user_waives_it(
    command: str, cwd: Path, no_bwrap: None
) -> None:
    made = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/r"])
    assert made.exit_code == 0, made.output  # made here, where auto fell back to local: the record says local
    assert _recorded_config(cwd / "runs" / "r", "run-created")["isolation"] == "local"
    args = {"replay": ["replay", "runs/r", "--execute"], "resume": ["resume", "runs/r"]}[command]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2, refused.output  # the recorded "local" is not taken as the user's choice
    assert "only under bubblewrap" in refused.output
    assert "--no-isolation" in refused.output
    assert "apt-get install bubblewrap" in refused.output
    waived = CliRunner().invoke(cli, [*args, "--no-isolation"])
    assert waived.exit_code == 0, waived.output
    assert "isolation: local (--no-isolation: the recorded Programs run unsandboxed)" in waived.output
    contradiction = CliRunner().invoke(cli, [*args, "--no-isolation", "--isolation", "bwrap"])
    assert contradiction.exit_code == 2
    assert "contradicts" in contradiction.output
