"""``--agent-isolation`` on run / resume: printed in the header, recorded resolved (never ``auto``); an explicit
``bwrap`` that cannot work is a usage error with the install hint; ``auto`` falls back to ``local`` and says why."""

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


def _recorded_config(record: Path) -> dict[str, object]:
    with sqlite3.connect(f"file:{record / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        (payload,) = db.execute("SELECT payload FROM events WHERE kind = 'run-created'").fetchone()
    config = json.loads(payload)["config"]
    assert isinstance(config, dict)
    return config


def test_explicit_agent_bwrap_without_bubblewrap_is_a_usage_error_with_the_install_hint(
    cwd: Path, no_bwrap: None
) -> None:
    args = ["run", "--agent", "baseline", *SMALL, "--record-to", "runs/x", "--agent-isolation", "bwrap"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "--agent-isolation bwrap was requested but cannot be used: bwrap is not installed" in result.output
    assert "apt-get install bubblewrap" in result.output
    assert "--agent-isolation local" in result.output
    assert not (cwd / "runs").exists()


def test_agent_auto_without_bubblewrap_falls_back_to_local_says_why_and_records_local(
    cwd: Path, no_bwrap: None
) -> None:
    result = CliRunner().invoke(cli, ["run", "--agent", "baseline", *SMALL, "--record-to", "runs/x"])
    assert result.exit_code == 0, result.output
    assert "agent isolation: local (auto: bwrap unavailable: bwrap is not installed)" in result.output
    assert _recorded_config(cwd / "runs" / "x")["agent_isolation"] == "local"


@pytest.mark.skipif(_BWRAP is None, reason=f"bubblewrap is not usable here: {_WHY_NOT}")
def test_the_default_run_sandboxes_the_agent_and_records_bwrap(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "--agent", "baseline", *SMALL, "--record-to", "runs/x"])
    assert result.exit_code == 0, result.output
    assert "agent isolation: bwrap" in result.output
    assert _recorded_config(cwd / "runs" / "x")["agent_isolation"] == "bwrap"
    assert "finished" in result.output


def test_resume_refuses_an_explicit_agent_bwrap_it_cannot_honour(cwd: Path, no_bwrap: None) -> None:
    created = CliRunner().invoke(
        cli, ["run", "--agent", "baseline", *SMALL, "--record-to", "runs/x", "--agent-isolation", "local"]
    )
    assert created.exit_code == 0, created.output
    result = CliRunner().invoke(cli, ["resume", "runs/x", "--no-isolation", "--agent-isolation", "bwrap"])
    assert result.exit_code == 2, result.output
    assert "apt-get install bubblewrap" in result.output
