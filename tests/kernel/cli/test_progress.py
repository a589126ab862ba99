"""Progress in a terminal only (rich), quiet in pipes and with -q; -v prints each step; -q/-v on every command."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from evoledger.kernel.cli import cli

_CLI = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()"]
SMALL = ["--validation-episodes", "2", "--assessment-episodes", "1", "--episode-budget", "4"]
COMMANDS = [
    ["run"], ["resume"], ["replay"], ["evaluate"], ["export"], ["benchmarks"], ["bundle"], ["unbundle"],
    ["ledger", "verify"], ["ledger", "log"], ["ledger", "show"], ["keys", "show"], ["keys", "create"],
    ["keys", "export"],
]  # fmt: skip


def _in_a_terminal(args: list[str], cwd: Path) -> str:
    """What a user sees when running ``evoledger ARGS`` in a terminal (a pseudo-terminal), escapes included."""
    main, child_end = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    child = subprocess.Popen([*_CLI, *args], stdin=child_end, stdout=child_end, stderr=child_end, cwd=cwd, env=env)
    os.close(child_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(main)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_evaluate_shows_progress_in_a_terminal_and_not_in_a_pipe_or_with_q(cwd: Path) -> None:
    seen = _in_a_terminal(["evaluate", "-n", "3"], cwd)
    assert "evaluating" in seen
    assert "3/3" in seen
    quiet = _in_a_terminal(["evaluate", "-n", "3", "-q"], cwd)
    assert "evaluating" not in quiet
    assert "isolation:" not in quiet  # -q drops the header lines too
    assert "score" in quiet  # ...but never the result
    piped = subprocess.run([*_CLI, "evaluate", "-n", "3"], capture_output=True, text=True, timeout=300, check=False)
    assert piped.returncode == 0, piped.stderr
    assert "evaluating" not in piped.stdout + piped.stderr


def test_run_shows_the_budget_then_judging_in_a_terminal_and_replay_execute_a_spinner(cwd: Path) -> None:
    seen = _in_a_terminal(["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/p"], cwd)
    assert "budget" in seen
    assert "judging" in seen  # Validation and Assessment after finish
    replayed = _in_a_terminal(["replay", "runs/p", "--execute", "--no-isolation"], cwd)
    assert "re-running every recorded Episode" in replayed
    assert "every check passed" in replayed


def test_verbose_prints_each_step_as_a_line_anywhere(cwd: Path) -> None:
    plain = CliRunner().invoke(cli, ["evaluate", "-n", "2"])
    assert "Episode 0: return" not in plain.output
    verbose = CliRunner().invoke(cli, ["evaluate", "-n", "2", "-v"])
    assert verbose.exit_code == 0, verbose.output
    assert "Episode 0: return" in verbose.output
    assert "Episode 1: return" in verbose.output
    run = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "-v", "--record-to", "runs/v"])
    assert run.exit_code == 0, run.output
    assert "submission-000001: " in run.output
    assert "finish accepted; validating up to 3 Candidates on 2 Episodes each" in run.output


def test_every_command_takes_quiet_and_verbose() -> None:
    for args in COMMANDS:
        text = CliRunner().invoke(cli, [*args, "--help"]).output
        assert "-q, --quiet" in text, args
        assert "-v, --verbose" in text, args
