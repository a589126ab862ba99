"""Errors and hints in the user's words, through the real CLI: --set, benchmarks NAME, ledger show, Ctrl-C, Agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.registry import default_registry

SMALL = ["--validation-episodes", "0", "--assessment-episodes", "1", "--episode-budget", "4"]
PYTHON_API = ("Ledger.", "writable=True", "entry_point=", "overwrite=True", "'executable' option", "Traceback")
_CLI = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()"]


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_an_unknown_set_key_is_one_line_with_did_you_mean_and_the_valid_keys(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "frozen-lake", "--set", "map_nam=8x8", "--record-to", "runs/s"])
    assert result.exit_code == 2
    (line,) = _error_lines(result.output)
    assert "--set map_nam: benchmark 'frozen-lake' has no such setting (did you mean 'map_name'?)" in line
    assert "valid keys: is_slippery, map_name, max_episode_steps" in line
    assert not (cwd / "runs" / "s").exists()
    wrong = CliRunner().invoke(cli, ["evaluate", "-b", "frozen-lake", "--set", "map_name=9x9", "-n", "1"])
    assert wrong.exit_code == 2
    (line,) = _error_lines(wrong.output)
    assert "--set map_name=9x9: Input should be '4x4' or '8x8'; valid keys:" in line


def test_benchmarks_name_describes_settings_spaces_and_score_rule() -> None:
    result = CliRunner().invoke(cli, ["benchmarks", "frozen-lake"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "map_name │ choice │ \"4x4\" │ '4x4', '8x8'" in text  # key, type, default, allowed values
    assert "max_episode_steps │ integer or none │ null │ 1 <= x <=" in text
    assert 'observations {"type": "Discrete", "n": 16, "start": 0}' in text
    assert "score success_rate, maximized: mean return, failed Episodes count 0" in text
    assert "--policy-abi evoledger, evopolicygym" in text  # FrozenLake has an EvoPolicyGym encoding
    data = json.loads(CliRunner().invoke(cli, ["benchmarks", "taxi", "--json"]).output)
    assert data["spec"]["id"].startswith("taxi")
    assert data["policy_abis"] == ["evoledger"]  # Taxi has none
    assert {s["key"] for s in data["settings"]} >= {"max_episode_steps"}


def test_the_benchmark_listing_never_cuts_a_name_at_80_columns() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([*_CLI, "benchmarks"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    shown = {line.split("│")[1].strip() for line in done.stdout.splitlines() if line.count("│") > 2}
    assert set(default_registry().names()) <= shown
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_ledger_show_prints_a_recorded_traceback(cwd: Path) -> None:
    (cwd / "bad").mkdir()
    (cwd / "bad" / "policy.py").write_text("def make_policy(context):\n    raise ValueError('no policy today')\n")
    assert CliRunner().invoke(cli, ["evaluate", "bad", "-n", "1", "--record-to", "rec"]).exit_code == 6
    logged = CliRunner().invoke(cli, ["ledger", "log", "rec", "--kind", "episode-finished", "--json"])
    digest = json.loads(logged.output.splitlines()[0])["payload"]["failure"]["traceback_digest"]
    for given in (digest, digest.removeprefix("sha256:")[:12]):
        shown = CliRunner().invoke(cli, ["ledger", "show", "rec", given])
        assert shown.exit_code == 0, shown.output
        assert "ValueError: no policy today" in shown.output
        assert "line 2, in make_policy" in shown.output
    missing = CliRunner().invoke(cli, ["ledger", "show", "rec", "0000000000"])
    assert missing.exit_code == 2
    assert "no Object in rec start with '0000000000'" in missing.output


def test_a_second_run_says_its_new_run_directory_first(cwd: Path) -> None:
    for n, expected in ((1, "run directory: runs/frozen-lake\n"), (2, "run directory: runs/frozen-lake-2 (runs/")):
        result = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL])
        assert result.exit_code == 0, result.output
        assert result.output.startswith(expected), (n, result.output[:200])


def test_an_agent_whose_program_is_missing_is_refused_before_anything_is_created(cwd: Path, no_bwrap: None) -> None:
    for agent in ("codex", "command:evoledger-no-such-agent-program --flag", "command:/nonexistent/agent"):
        result = CliRunner().invoke(cli, ["run", "--agent", agent, "--record-to", "runs/m"])
        assert result.exit_code == 2, result.output
        (line,) = _error_lines(result.output)
        assert "is not installed" in line or "is not an executable file" in line
        assert "--agent 'command:/path/to/program ARGS...'" in line
        assert not (cwd / "runs").exists()


def test_no_cli_error_names_the_python_api(cwd: Path) -> None:
    (cwd / "empty").mkdir()
    assert CliRunner().invoke(cli, ["evaluate", "-n", "1", "--record-to", "rec"]).exit_code == 0
    outputs = [
        CliRunner().invoke(cli, ["evaluate", "-n", "1", "--record-to", "rec"]),  # a record is there already
        CliRunner().invoke(cli, ["evaluate", "empty", "-n", "1"]),  # no policy.py
        CliRunner().invoke(cli, ["run", "--program", "empty", "--record-to", "runs/e"]),
        CliRunner().invoke(cli, ["run", "--agent", "command:evoledger-no-such-agent-program"]),
        CliRunner().invoke(cli, ["evaluate", "-b", "cartpole", "--set", "max_episode_steps=0", "-n", "1"]),
    ]
    for result in outputs:
        assert result.exit_code in (2, 3), result.output
        (line,) = _error_lines(result.output)
        assert not [api for api in PYTHON_API if api in result.output], line


@pytest.mark.skipif(sys.platform != "linux", reason="signals to a child process, as a terminal sends them")
def test_ctrl_c_of_run_says_how_to_resume(cwd: Path) -> None:
    args = ["run", "frozen-lake", "--agent", "command:sleep 60", "--agent-isolation", "local", "--record-to", "runs/i"]
    child = subprocess.Popen([*_CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (cwd / "runs" / "i" / "control" / "session.sock").exists():
            assert time.monotonic() < deadline, "the Run never started its Session"
            assert child.poll() is None, child.communicate()
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    assert "continue it with: evoledger resume runs/i" in err
