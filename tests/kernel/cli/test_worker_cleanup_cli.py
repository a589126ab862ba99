"""Through the real CLI: a Policy that stops its worker cannot hang `evoledger evaluate`, and SIGTERM or Ctrl-C of a
command leaves no worker process behind.

Every command runs as a real subprocess; its descendants (workers, zygotes, Policy children) are found by scanning
/proc while it runs, and after it ends each of them must be gone. Every wait has a generous deadline (these tests
must pass on a machine busy with other work); nothing asserts a duration. The hostile Policies signal only our own
worker or zygote, found by name, and run with ``--isolation local`` (in a bubblewrap sandbox they could not reach
them at all).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evoledger.tests.support.hostile_programs import stopper
from evoledger.tests.support.process_tree import alive, descendants, wait_until

_CLI = "from evoledger.kernel.cli import main; main()"

STOP_WORKER = stopper("worker")
STOP_ZYGOTE_THEN_WAIT = stopper("zygote", pause=0.2)
SLOW = """
import time


class _Policy:
    def act(self, observation):
        time.sleep(0.2)
        return 0


def make_policy(context):
    return _Policy()
"""


def _program(root: Path, name: str, source: str) -> Path:
    directory = root / name
    directory.mkdir()
    (directory / "policy.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return directory


@pytest.fixture
def spawn(cwd: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``evoledger ARGS`` as a subprocess; whatever the test leaves of it is killed at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", _CLI, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "EVOLEDGER_HOME": str(cwd / "home")},
        )
        started.append(process)
        return process

    yield start
    for process in started:
        for pid in descendants(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.communicate(timeout=60)


def test_a_policy_that_stops_its_worker_cannot_hang_evaluate(
    cwd: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    program = _program(cwd, "stopper", STOP_WORKER)
    process = spawn("evaluate", str(program), "-b", "toy-counter", "-n", "2", "--isolation", "local", "--json")
    seen: set[int] = set()
    deadline = time.monotonic() + 180  # two replacement workers start under heavy load within this
    while process.poll() is None and time.monotonic() < deadline:
        seen |= descendants(process.pid)
        time.sleep(0.05)
    assert process.poll() is not None, "evaluate was still running after 180 s"
    out, err = process.communicate()
    report = json.loads(out)
    statuses = [episode["status"] for episode in report["episodes"]]
    assert statuses == ["protocol_error", "protocol_error"], err
    assert wait_until(lambda: not alive(seen), 30), f"left behind: {alive(seen)}"


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
@pytest.mark.parametrize("policy", ["slow", "stops-its-zygote"])
def test_ending_evaluate_leaves_no_worker_behind(
    cwd: Path, spawn: Callable[..., subprocess.Popen[str]], how: signal.Signals, policy: str
) -> None:
    source = SLOW if policy == "slow" else STOP_ZYGOTE_THEN_WAIT
    program = _program(cwd, "policy", source)
    long_episodes = ["--set", "max_episode_steps=1000", "--set", "terminate_on_hit=false"]  # minutes at 0.2 s/step
    process = spawn("evaluate", str(program), "-b", "toy-counter", *long_episodes, "-n", "5", "--isolation", "local")
    # Mid-Episode: the worker, its zygote and a Policy child (at least) are running.
    assert wait_until(lambda: len(descendants(process.pid)) >= 3 or process.poll() is not None, 120)
    time.sleep(0.5)  # let the Policy act (and stop its zygote) for a while
    seen = descendants(process.pid)
    assert process.poll() is None, process.communicate()
    process.send_signal(how)
    process.communicate(timeout=120)
    assert wait_until(lambda: not alive(seen), 30), f"left behind: {alive(seen)}"
