"""Through the real CLI: SIGTERM or Ctrl-C of `evoledger run`, `resume`, `replay --execute` and `evaluate` while
Episodes run leaves no process of the command behind and no temporary file, exits as the README's table says (130
after Ctrl-C; SIGTERM ends the process by SIGTERM), keeps the ledger intact and says how to continue the Run; and
`evoledger resume` then finishes it.

Each command runs as a real subprocess in its own session, as a shell runs a job: Ctrl-C is SIGINT to that process
group (the command's workers and its Agent lead groups of their own, so it reaches the Host only), SIGTERM goes to
the Host's pid as ``kill PID`` sends it. Its process tree (workers, zygotes, sandboxes, Policy children, the Agent)
is taken from /proc while it runs, and each of those processes must be gone soon after the command ends. The Policy
and the Agent name themselves (``/proc/self/comm``) so that the test knows which phase the command is in: a Policy
process alive while the Agent is alive is a Submission's Episode; one alive after the Agent is gone is judging.
Every wait has a generous deadline, and nothing asserts a duration.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.tests.support.process_tree import alive, descendants, wait_until

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_CLI = "from evoledger.kernel.cli import main; main()"
_SUPPORT = Path(__file__).resolve().parents[2] / "support"  # tests/support/session_call.py
_POLICY_NAME = "evl-policy"
_AGENT_NAME = "evl-agent"
_INTERRUPTED = 130  # README: exit codes
_SANDBOX = [] if probe_bwrap()[0] is not None else ["--no-isolation"]  # resume / replay --execute run recorded code

# Half a second per Episode (10 steps of toy-counter that never end early): long enough to be caught running.
POLICY = f"""
import time


class _Policy:
    def act(self, observation):
        time.sleep(0.05)
        return 0


def make_policy(context):
    with open("/proc/self/comm", "w") as comm:
        comm.write({_POLICY_NAME!r})
    return _Policy()
"""
BENCHMARK = ["toy-counter", "--set", "terminate_on_hit=false"]

# Submits the Program on EPISODES and finishes with it; restarted by `resume`, it finishes with what is there.
# A call that fails (the Host is gone) does not end it: it goes on working, as a coding agent would.
AGENT = f"""
import sys
import time
sys.path.insert(0, {str(_SUPPORT)!r})
from session_call import call
with open("/proc/self/comm", "w") as comm:
    comm.write({_AGENT_NAME!r})
try:
    known = call("status")["result"]["submissions"]
    if known:
        chosen = known[0]["submission_id"]
    else:
        chosen = call("submit", program="program", episodes=sys.argv[1])["result"]["submission_id"]
    print(call("finish", candidates=[chosen]))
except (OSError, EOFError):
    time.sleep(300)
"""


def _agent(episodes: str) -> str:
    return "command:" + shlex.join([sys.executable, "-c", AGENT, episodes])


def _named(pids: set[int], name: str) -> bool:
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
            if comm.read().strip() == name:
                return True
    return False


class Commands:
    """Starts ``evoledger ARGS`` in its own session, as a shell starts a job, with ``TMPDIR`` in the test's folder;
    whatever a test leaves of them is killed at its end."""

    def __init__(self, cwd: Path) -> None:
        self.tmp = cwd / "tmp"
        self.tmp.mkdir()
        self.env = {**os.environ, "EVOLEDGER_HOME": str(cwd / "home"), "TMPDIR": str(self.tmp)}
        self.started: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", _CLI, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def finish(self, *args: str) -> tuple[int, str]:
        """Run ``evoledger ARGS`` to its end: its exit code and its output (stdout, then stderr)."""
        process = self.start(*args)
        out, err = process.communicate(timeout=300)
        return process.returncode, out + err

    def interrupt(
        self, process: subprocess.Popen[str], how: signal.Signals, running: Callable[[set[int]], bool]
    ) -> str:
        """Once ``running(its descendants)`` holds, end ``process`` by ``how`` and check that it ends cleanly: the
        documented exit, no traceback, none of its processes and none of its temporary files left. Its stderr."""
        assert wait_until(lambda: running(descendants(process.pid)) or process.poll() is not None, 180)
        seen = descendants(process.pid)
        assert process.poll() is None, process.communicate()
        if how == signal.SIGINT:
            os.killpg(process.pid, how)  # a terminal's Ctrl-C: the foreground process group
        else:
            process.send_signal(how)  # kill PID
        _, err = process.communicate(timeout=120)
        assert wait_until(lambda: not alive(seen), 30), f"left behind: {alive(seen)}\n{err}"
        assert "Traceback" not in err, err
        if how == signal.SIGINT:
            assert process.returncode == _INTERRUPTED, err
            assert "interrupted" in err, err
        else:
            assert process.returncode == -signal.SIGTERM, err  # ended by SIGTERM, as before: a shell says 143
        assert sorted(p.name for p in self.tmp.iterdir()) == [], err
        return err

    def end(self) -> None:
        for process in self.started:
            for pid in descendants(process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.communicate(timeout=60)


@pytest.fixture
def commands(cwd: Path) -> Iterator[Commands]:
    started = Commands(cwd)
    yield started
    started.end()


def _policy_running(tree: set[int]) -> bool:
    return _named(tree, _POLICY_NAME)


def _judging(tree: set[int]) -> bool:
    return _named(tree, _POLICY_NAME) and not _named(tree, _AGENT_NAME)


def _program(cwd: Path) -> Path:
    program = cwd / "program"
    program.mkdir()
    (program / "policy.py").write_text(POLICY.lstrip(), encoding="utf-8")
    return program


def _start_run(commands: Commands, cwd: Path, isolation: str, *config: str) -> subprocess.Popen[str]:
    program = str(_program(cwd))
    isolations = ["--isolation", isolation, "--agent-isolation", isolation]
    return commands.start("run", *BENCHMARK, "--program", program, "--record-to", "runs/r", *isolations, *config)


def _kept(commands: Commands, err: str) -> None:
    """The interrupted Run: the message says how to continue it, and its record passes the audit."""
    assert "continue it with: evoledger resume runs/r" in err, err
    code, output = commands.finish("replay", "runs/r")
    assert code == 0, output


def _resume(commands: Commands) -> subprocess.Popen[str]:
    return commands.start("resume", "runs/r", *_SANDBOX, "--trust-recorded-agent", "--json")


def _resumed(commands: Commands) -> None:
    """`evoledger resume` finishes the Run: the Agent's Submission selected."""
    process = _resume(commands)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, out + err
    result = json.loads(out)
    assert (result["reason"], result["selected"]) == ("finished", "submission-000001")


SIGNALS = pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
NO_JUDGING = ["--validation-episodes", "0", "--assessment-episodes", "0"]


@pytest.mark.parametrize(
    ("isolation", "how"),
    [("local", signal.SIGTERM), ("local", signal.SIGINT), ("auto", signal.SIGTERM)],
    ids=["local-sigterm", "local-ctrl-c", "auto-sigterm"],
)
def test_ending_run_while_a_submission_runs_leaves_nothing_behind_and_resume_finishes_it(
    cwd: Path, commands: Commands, isolation: str, how: signal.Signals
) -> None:
    # --agent-isolation local: before the fix, SIGTERM left this Agent running (it has its own process group).
    process = _start_run(commands, cwd, isolation, "--agent", _agent("0:4"), "--episode-budget", "4", *NO_JUDGING)
    _kept(commands, commands.interrupt(process, how, _policy_running))
    _resumed(commands)


@SIGNALS
def test_ending_run_while_it_judges_leaves_nothing_behind_and_resume_finishes_it(
    cwd: Path, commands: Commands, how: signal.Signals
) -> None:
    judged = ["--episode-budget", "1", "--validation-episodes", "2", "--assessment-episodes", "2"]
    process = _start_run(commands, cwd, "auto", "--agent", _agent("0:1"), *judged)
    _kept(commands, commands.interrupt(process, how, _judging))
    _resumed(commands)


def test_ending_resume_while_it_completes_a_submission_leaves_nothing_behind(cwd: Path, commands: Commands) -> None:
    process = _start_run(commands, cwd, "auto", "--agent", _agent("0:4"), "--episode-budget", "4", *NO_JUDGING)
    commands.interrupt(process, signal.SIGINT, _policy_running)
    _kept(commands, commands.interrupt(_resume(commands), signal.SIGTERM, _policy_running))
    _resumed(commands)


@pytest.fixture(scope="module")
def recorded() -> Iterator[Path]:
    """A finished Run of four half-second Episodes (shared: `replay --execute` only reads it)."""
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    _program(root)
    args = ["run", *BENCHMARK, "--program", "program", "--record-to", "r", "--agent", _agent("0:4")]
    subprocess.run(
        [sys.executable, "-c", _CLI, *args, "--episode-budget", "4", *NO_JUDGING, "-q"],
        cwd=root,
        env={**os.environ, "EVOLEDGER_HOME": str(root / "home")},
        check=True,
        capture_output=True,
        timeout=300,
    )
    yield root / "r"
    shutil.rmtree(root, ignore_errors=True)


@SIGNALS
def test_ending_replay_execute_while_it_reruns_episodes_leaves_nothing_behind(
    recorded: Path, commands: Commands, how: signal.Signals
) -> None:
    process = commands.start("replay", str(recorded), "--execute", *_SANDBOX)
    commands.interrupt(process, how, _policy_running)
    code, output = commands.finish("replay", str(recorded))
    assert code == 0, output  # a re-execution only reads the record


@SIGNALS
def test_ending_evaluate_exits_as_documented(cwd: Path, commands: Commands, how: signal.Signals) -> None:
    process = commands.start("evaluate", str(_program(cwd)), "-b", *BENCHMARK, "-n", "20")
    commands.interrupt(process, how, _policy_running)
