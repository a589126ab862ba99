"""Real Ray nodes started with ``ray start --block`` for the tests that need a cluster of their own (a second node, a
Ray Client server), each in its own session and stopped by its process group id, never by name (``ray stop`` would
stop every Ray on the machine, a colleague's too)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from evoledger.tests.support.process_tree import wait_until

__all__ = ["RAY_ENV", "free_port", "ray_nodes"]

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
"""No usage report; no token authentication (it would need the token on every client of the test cluster)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _node_count(address: str, env: Mapping[str, str]) -> int:
    code = f"import ray; ray.init(address={address!r}); print(len(ray.nodes()))"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return 0
    words = done.stdout.split()
    return int(words[-1]) if done.returncode == 0 and words and words[-1].isdigit() else 0


@contextlib.contextmanager
def ray_nodes(
    root: Path, *, head_args: Sequence[str] = (), second_prefix: Sequence[str] | None = None
) -> Iterator[tuple[str, dict[str, str], list[subprocess.Popen[bytes]]]]:
    """A head (one CPU, its files under ``root/h``, plus ``head_args``) and, given ``second_prefix`` (a command the
    second node's ``ray start`` runs under, such as ``bwrap ...``, or none: ``[]``), a second node; yields the head's
    address, the environment to reach it with and each node's ``ray start --block`` process (head first; a test may
    kill a node's processes to lose it). Stopped on exit: ``SIGTERM`` to each node's process group, ``SIGKILL``
    after 60 s."""
    port = free_port()
    env = {**os.environ, **RAY_ENV}
    start = [sys.executable, "-m", "ray.scripts.scripts", "start", "--num-cpus=1", "--block"]
    address = f"127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []

    def launch(argv: list[str]) -> None:
        started.append(
            subprocess.Popen(
                argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )

    try:
        head = ["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={root / 'h'}", *head_args]
        launch([*start, *head])
        assert wait_until(lambda: _node_count(address, env) == 1, 240, every=1.0), "the Ray head never started"
        if second_prefix is not None:
            launch([*second_prefix, *start, f"--address={address}"])
            assert wait_until(lambda: _node_count(address, env) == 2, 240, every=1.0), "the second node never joined"
        yield address, env, started
    finally:
        for process in reversed(started):  # ray start --block stops its node's processes on SIGTERM
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
