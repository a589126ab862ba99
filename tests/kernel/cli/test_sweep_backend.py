"""``evoledger sweep --backend ray --episodes-backend ray``: every Run of the sweep is placed on a Ray node, its node
recorded, and its Episodes go to the same cluster; without ``--ray-address`` they all share one private local Ray
instance that the sweep starts and stops. Real CLI processes and a real Ray (the kill and resume of placed Runs:
tests/kernel/sweep/test_ray_placement.py, under ``-m catalog``)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from evoledger.kernel.sweep.record import read_sweep

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_CLI = "import sys; from evoledger.kernel.cli import main; sys.exit(main())"
_WITHOUT_RAY = "import sys; sys.modules['ray'] = None; " + _CLI.removeprefix("import sys; ")

SWEEP = """
[sweep]
seeds = [0, 1]
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


def _sweep(cwd: Path, *args: str, code: str = _CLI) -> subprocess.CompletedProcess[str]:
    (cwd / "s.toml").write_text(SWEEP)
    return subprocess.run(
        [sys.executable, "-c", code, "sweep", "s.toml", "--out", "out", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray: pip install 'evoledger[ray]'")
def test_every_run_of_a_ray_sweep_is_placed_and_shares_the_instance_the_sweep_started(tmp_path: Path) -> None:
    done = _sweep(tmp_path, "--parallel", "2", "--backend", "ray", "--episodes-backend", "ray", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert [cell["state"] for cell in result["cells"]] == ["finished", "finished"], result
    assert [cell["node"] for cell in result["cells"]] == [os.uname().nodename] * 2
    addresses = set()
    for log in sorted((tmp_path / "out" / "logs").iterdir()):
        command = log.read_text().splitlines()[0]  # "--- attempt 1: run: <argv>"
        words = command.split()
        assert words[words.index("--backend") + 1] == "ray", command
        addresses.add(words[words.index("--ray-address") + 1])
    assert len(addresses) == 1  # one instance for every Run, not one each
    state = read_sweep(tmp_path / "out")
    ends = [history.last_end for history in state.cells.values()]
    assert [end.outcome if end else None for end in ends] == ["finished", "finished"]
    placed = [history.placed for history in state.cells.values()]
    assert all(p is not None and p.attempt == 1 and p.hostname == os.uname().nodename for p in placed), placed
    assert len({p.pid for p in placed if p is not None}) == 2


def test_a_ray_sweep_without_ray_is_one_line_with_the_install_command_and_creates_nothing(tmp_path: Path) -> None:
    done = _sweep(tmp_path, "--backend", "ray", code=_WITHOUT_RAY)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'evoledger[ray]'" in line
    assert not (tmp_path / "out").exists()


def test_a_ray_address_without_the_ray_backend_is_refused_before_anything_starts(tmp_path: Path) -> None:
    done = _sweep(tmp_path, "--ray-address", "auto")
    assert done.returncode == 2, done.stderr
    assert "--ray-address 'auto' needs --backend ray or --episodes-backend ray" in done.stderr
    assert not (tmp_path / "out").exists()


def test_runs_are_not_placed_through_ray_client_and_nothing_is_created(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from evoledger.kernel.cli import cli

    (tmp_path / "s.toml").write_text(SWEEP)
    out = tmp_path / "out"
    args = ["sweep", str(tmp_path / "s.toml"), "--out", str(out), "--backend", "ray", "--ray-address", "ray://h:1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "--backend ray cannot place Runs through Ray Client (--ray-address ray://h:1)" in result.output
    assert "--episodes-backend ray takes a ray:// address" in result.output
    assert not out.exists()
