"""A Benchmark family whose optional extra is missing, through the real CLI in real processes.

The family (tests/support/fake_family.py) is installed as a third-party distribution with an entry point; its
extra's module is on ``PYTHONPATH`` or not. It is listed either way, with the install command when missing; every
command that builds it (``benchmarks NAME``, ``evaluate``, ``run``, ``replay --execute``, ``export``) then fails
with one line, exit 2 (a ConfigError), no traceback, the exact install command, and nothing created.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.tests.support.fake_family import FAKE_EXTRA, FAKE_NAME, FakeFamily, install_fake_family

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]
_INSTALL = f"pip install 'evoledger[{FAKE_EXTRA}]'"
_SMALL_RUN = ["--agent", "baseline", "--validation-episodes", "0", "--assessment-episodes", "1"]
_SMALL_RUN += ["--episode-budget", "2"]


def _cli(family: FakeFamily, *args: str, cwd: Path, installed: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": family.pythonpath(installed=installed), "COLUMNS": "200"}
    bin_dir = Path(sys.executable).parent  # evoledger-session for the Agent of a Run
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([*_CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[FakeFamily, Path]]:
    """The fake family, and a Run and an evaluation record of its Benchmark made while its extra was installed."""
    root = Path(tempfile.mkdtemp(prefix="evx-", dir="/tmp"))  # short: Unix socket paths are limited
    family = install_fake_family(root)
    done = _cli(family, "run", FAKE_NAME, *_SMALL_RUN, "--seed", "1", "--record-to", "run", cwd=root, installed=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    done = _cli(family, "evaluate", "-b", "fake-old", "-n", "2", "--record-to", "eval", cwd=root, installed=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    yield family, root
    shutil.rmtree(root, ignore_errors=True)


def _assert_one_line_install_error(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    expected = (
        f"error: {FAKE_NAME} needs the optional extra {FAKE_EXTRA!r} (module 'evoledger_fake_heavy_dependency' is "
        f"not installed); install it with: {_INSTALL}"
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1] == expected, done.stderr  # after at most a note or two (replay's isolation), nothing else
    assert [line for line in lines if "error" in line] == [expected], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_a_family_without_its_extra_is_listed_with_the_install_command(recorded: tuple[FakeFamily, Path]) -> None:
    family, root = recorded
    listed = _cli(family, "benchmarks", "--json", cwd=root, installed=False)
    assert listed.returncode == 0, listed.stderr
    (row,) = (r for r in json.loads(listed.stdout) if r["name"] == FAKE_NAME)
    assert row == {
        "name": FAKE_NAME,
        "family": "fake",
        "summary": "a toy counter behind an extra that may be missing",
        "aliases": ["fake-old"],
        "extra": FAKE_EXTRA,
        "installed": False,
        "install_command": _INSTALL,
    }
    table = _cli(family, "benchmarks", "--family", "fake", cwd=root, installed=False)
    assert table.returncode == 0, table.stderr
    assert f"not installed: 1 Benchmarks need the extra {FAKE_EXTRA!r}: {_INSTALL}" in table.stdout
    assert "classic-control" not in table.stdout
    found = _cli(family, "benchmarks", "--search", "FAKE-OLD", "--json", cwd=root, installed=True)
    assert [r["name"] for r in json.loads(found.stdout)] == [FAKE_NAME]
    assert json.loads(found.stdout)[0]["installed"] is True


@pytest.mark.parametrize(
    "args",
    [
        ["benchmarks", FAKE_NAME],
        ["evaluate", "-b", FAKE_NAME, "-n", "1"],
        ["evaluate", "-b", "fake-old", "-n", "1", "--record-to", "new-eval"],
        ["run", "fake-old", *_SMALL_RUN, "--record-to", "new-run"],
    ],
    ids=["describe", "evaluate", "evaluate-alias", "run"],
)
def test_building_a_benchmark_without_its_extra_is_one_line_with_the_install_command(
    recorded: tuple[FakeFamily, Path], args: list[str]
) -> None:
    family, root = recorded
    _assert_one_line_install_error(_cli(family, *args, cwd=root, installed=False))
    assert not (root / "new-eval").exists()
    assert not (root / "new-run").exists()


def test_replay_execute_and_export_of_records_need_the_extra_too(recorded: tuple[FakeFamily, Path]) -> None:
    family, root = recorded
    _assert_one_line_install_error(
        _cli(family, "replay", "run", "--execute", "--no-isolation", cwd=root, installed=False)
    )
    _assert_one_line_install_error(_cli(family, "export", "eval", "--out", "ds", cwd=root, installed=False))
    assert not (root / "ds").exists()
    audit = _cli(family, "replay", "run", "--json", cwd=root, installed=False)  # auditing builds nothing
    assert audit.returncode == 0, audit.stdout[-2000:] + audit.stderr[-2000:]
    again = _cli(family, "replay", "run", "--execute", "--no-isolation", "--json", cwd=root, installed=True)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
