"""``python -m evoledger`` is the ``evoledger`` command line."""

from __future__ import annotations

import subprocess
import sys

from evoledger import __version__


def _module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evoledger", *args], capture_output=True, text=True, timeout=120)


def test_python_dash_m_shows_the_cli_help() -> None:
    done = _module("--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: evoledger" in done.stdout
    for command in ("run", "evaluate", "replay", "export"):
        assert f"  {command}" in done.stdout


def test_python_dash_m_reports_the_version_and_exit_codes() -> None:
    assert __version__ in _module("--version").stdout
    unknown = _module("no-such-command")
    assert unknown.returncode == 2
    assert "No such command" in unknown.stderr
