"""Progress in a terminal only (rich), quiet in pipes and with -q; -v prints each step; -q/-v on every command.

The bars count real work: a Run's Validation and Assessment Episodes (at the end of ``run`` and ``resume``), the
Episodes ``replay --execute`` re-runs and what ``export`` writes, each ending at done/total.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_CLI = [sys.executable, "-c", "from evoledger.kernel.cli import main; main()"]
SMALL = ["--validation-episodes", "2", "--assessment-episodes", "1", "--episode-budget", "4"]
JUDGED = ["frozen-lake", "--agent", "baseline", "--validation-episodes", "2", "--assessment-episodes", "3"]
JUDGED += ["--episode-budget", "4"]
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
COMMANDS = [
    ["run"], ["resume"], ["replay"], ["evaluate"], ["export"], ["benchmarks"], ["bundle"], ["unbundle"],
    ["ledger", "verify"], ["ledger", "log"], ["ledger", "show"], ["keys", "show"], ["keys", "create"],
    ["keys", "export"],
]  # fmt: skip


def _environ() -> dict[str, str]:
    """This process's environment without rich's overrides of terminal detection (a CI may set FORCE_COLOR)."""
    return {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}


def _in_a_terminal(args: list[str], cwd: Path) -> str:
    """What a user sees when running ``evoledger ARGS`` in a terminal (a pseudo-terminal), escapes included."""
    main, child_end = pty.openpty()
    env = {**_environ(), "TERM": "xterm", "COLUMNS": "120"}
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


def _screen(raw: str) -> str:
    """The terminal's text without escape sequences, each redraw on its own line."""
    return _ESCAPES.sub("", raw).replace("\r", "\n")


def _finished(screen: str, what: str, unit: str = "Episodes") -> int:
    """The total of the bar ``what`` drawn at done == total (fails when no such bar was drawn)."""
    found = re.search(rf"{re.escape(what)}\s+━+\s+(\d+)/(\1) {re.escape(unit)}", screen)
    assert found is not None, f"no finished {what!r} bar in: {screen[-3000:]}"
    return int(found.group(1))


def _piped(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_CLI, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
        env={**_environ(), **(env or {})},
    )


def _no_bar(result: subprocess.CompletedProcess[str]) -> None:
    assert "\x1b[" not in result.stderr  # no escape sequences...
    assert "\r" not in result.stderr  # ...and no redraws
    assert not re.search(r"\d+/\d+ (Episodes|rows)", result.stdout + result.stderr), result.stderr


@pytest.fixture(scope="module")
def judged_run() -> Iterator[Path]:
    """One ``run JUDGED`` made in a pipe (it must draw nothing there), shared by the tests that read a Run."""
    root = Path(tempfile.mkdtemp(prefix="evp-", dir="/tmp"))
    try:
        piped = _piped(["run", *JUDGED, "--record-to", "runs/p"], root)
        assert piped.returncode == 0, piped.stderr
        _no_bar(piped)
        yield root / "runs" / "p"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_evaluate_shows_progress_in_a_terminal_and_not_in_a_pipe_or_with_q(cwd: Path) -> None:
    seen = _in_a_terminal(["evaluate", "-n", "3"], cwd)
    assert "evaluating" in seen
    assert "3/3" in seen
    quiet = _in_a_terminal(["evaluate", "-n", "3", "-q"], cwd)
    assert "evaluating" not in quiet
    assert "isolation:" not in quiet  # -q drops the header lines too
    assert "score" in quiet  # ...but never the result
    piped = _piped(["evaluate", "-n", "3"], cwd)
    assert piped.returncode == 0, piped.stderr
    assert "evaluating" not in piped.stdout + piped.stderr


def test_run_counts_its_validation_and_assessment_episodes_in_a_terminal_and_draws_nothing_in_a_pipe(
    cwd: Path, judged_run: Path
) -> None:
    seen = _screen(_in_a_terminal(["run", *JUDGED, "--record-to", "runs/p"], cwd))
    assert "budget" in seen
    assert "judging" in seen  # Validation and Assessment after finish
    validated = _finished(seen, "validation")
    assert validated > 0
    assert validated % 2 == 0  # every Candidate on the 2 Validation Episodes
    assert _finished(seen, "assessment") == 3
    # the same Run in a pipe draws nothing: the judged_run fixture makes it so and checks


def test_resume_counts_the_judging_it_completes_in_a_terminal_and_draws_nothing_in_a_pipe(cwd: Path) -> None:
    crashed = _piped(["run", *JUDGED, "--record-to", "runs/c"], cwd, env={"EVOLEDGER_CRASH_AFTER": "finish-accepted:1"})
    assert crashed.returncode == -9, crashed.stderr  # the Host died before any Validation Episode
    _no_bar(crashed)
    shutil.copytree(cwd / "runs" / "c", cwd / "runs" / "d", ignore=shutil.ignore_patterns("session.sock"))
    seen = _screen(_in_a_terminal(["resume", "runs/c"], cwd))
    validated = _finished(seen, "validation")
    assert validated > 0
    assert validated % 2 == 0
    assert _finished(seen, "assessment") == 3
    piped = _piped(["resume", "runs/d"], cwd)
    assert piped.returncode == 0, piped.stderr
    _no_bar(piped)


def test_replay_execute_and_export_count_every_episode_in_a_terminal_and_draw_nothing_in_a_pipe(
    cwd: Path, judged_run: Path
) -> None:
    shutil.copytree(judged_run, cwd / "runs" / "p", ignore=shutil.ignore_patterns("session.sock"))
    replayed = _screen(_in_a_terminal(["replay", "runs/p", "--execute", "--no-isolation"], cwd))
    assert "every check passed" in replayed
    episodes = _finished(replayed, "re-running")  # training, Validation and Assessment Episodes
    assert episodes >= 4 + 2 + 3
    exported = _screen(_in_a_terminal(["export", "runs/p", "--out", "ds/all", "--visibility", "all"], cwd))
    assert _finished(exported, "steps") == episodes  # the same Episodes, each read once per Episode config
    assert _finished(exported, "episodes") == episodes
    assert _finished(exported, "submissions", "rows (Submissions)") >= 1
    assert _finished(exported, "messages", "rows (Runs)") == 1
    for args in (["replay", "runs/p", "--execute", "--no-isolation"], ["export", "runs/p", "--out", "ds/piped"]):
        piped = _piped(args, cwd)
        assert piped.returncode == 0, piped.stderr
        _no_bar(piped)
    quiet = _screen(_in_a_terminal(["export", "runs/p", "--out", "ds/quiet", "-q"], cwd))
    assert "Episodes" not in quiet  # -q: no bar...
    assert "steps" in quiet  # ...but the result


def test_force_color_draws_the_bars_where_stderr_is_not_a_terminal(cwd: Path, judged_run: Path) -> None:
    forced = _piped(["export", str(judged_run), "--out", "ds/ci"], cwd, env={"FORCE_COLOR": "1"})  # e.g. a CI log
    assert forced.returncode == 0, forced.stderr
    assert _finished(_screen(forced.stderr), "episodes") >= 4


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
    assert "assessment: 1/1 Episodes" in run.output  # each judging phase's count, once it completes


def test_every_command_takes_quiet_and_verbose() -> None:
    for args in COMMANDS:
        text = CliRunner().invoke(cli, [*args, "--help"]).output
        assert "-q, --quiet" in text, args
        assert "-v, --verbose" in text, args
