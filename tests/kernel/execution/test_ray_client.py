"""``--ray-address ray://HOST:PORT`` (Ray Client) against a real local head started with ``ray start --head
--ray-client-server-port``: ``evaluate`` gives the local backend's trajectories, and a sweep refuses to place Runs
through it (its Runs' Episodes may go through it). Under ``-m catalog``: a head of its own costs tens of seconds."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from evoledger.tests.support.ray_nodes import free_port, ray_nodes

pytestmark = [
    pytest.mark.catalog,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None or importlib.util.find_spec("grpc") is None,
        reason="needs Ray with its client: pip install 'evoledger[ray]'",
    ),
]

_CLI = [sys.executable, "-m", "evoledger"]
PROGRAM = Path(__file__).resolve().parents[3] / "benchmarks" / "programs" / "toy-random"
SWEEP = """
[sweep]
seeds = [0]
[run]
episode_budget = 2
validation = { episodes = 1 }
assessment = { episodes = 1 }
isolation = "local"
agent_isolation = "local"
[[benchmark]]
name = "toy/counter"
[[agent]]
name = "baseline"
"""


def _evaluate(cwd: Path, env: dict[str, str], *extra: str) -> list[str]:
    argv = [*_CLI, "evaluate", str(PROGRAM), "-b", "toy/counter", "-n", "3", "-w", "1", "--isolation", "local"]
    done = subprocess.run([*argv, *extra, "--json"], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return [episode["trajectory_digest"] for episode in json.loads(done.stdout)["episodes"]]


def test_evaluate_through_ray_client_matches_local_and_a_sweep_places_no_run_through_it() -> None:
    root = Path(tempfile.mkdtemp(prefix="evc-", dir="/tmp"))
    client = free_port()
    # the client server finds the runtime-env agent only at a fixed port (a dynamic one reaches it as port 0)
    head = [f"--ray-client-server-port={client}", f"--runtime-env-agent-port={free_port()}"]
    try:
        (root / "s.toml").write_text(SWEEP)
        with ray_nodes(root, head_args=head) as (_, env, _):
            through = f"ray://127.0.0.1:{client}"
            remote = _evaluate(root, env, "--backend", "ray", "--ray-address", through)
            refused = subprocess.run(
                [*_CLI, "sweep", "s.toml", "--out", "out", "--backend", "ray", "--ray-address", through],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=600,
                env=env,
            )
        local = _evaluate(root, env)
        assert remote == local
        assert refused.returncode == 2, refused.stderr
        assert "--backend ray cannot place Runs through Ray Client" in refused.stderr
        assert not (root / "out").exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)
