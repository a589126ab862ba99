"""``evoledger env`` through the real CLI, without making a venv: its errors, listings and what a missing family venv
means for the commands that run Episodes (a venv made for real: tests/kernel/family_env/test_own_environment.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from evoledger.tests.support.own_env_family import OWN_ENV_FAMILY, OWN_ENV_NAME, install_own_env_family

Cli = Callable[..., subprocess.CompletedProcess[str]]
_CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    family = install_own_env_family(tmp_path / "family")
    env = {**os.environ, "PYTHONPATH": family.pythonpath(), "EVOLEDGER_ENVS": str(tmp_path / "envs"), "COLUMNS": "200"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*_CLI, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    return run


def _error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1]


def test_env_refuses_an_unknown_family_with_the_closest_name_and_a_shared_one_with_its_pip_command(cli: Cli) -> None:
    assert _error(cli("env", "install", "own-env-tst")) == (
        "error: unknown family 'own-env-tst'. Did you mean 'own-env-test'? Families with their own environment: "
        "dm-control, metaworld, nle, own-env-test, robosuite (see: evoledger env list)."
    )
    assert _error(cli("env", "install", "box2d")) == (
        "error: family 'box2d' shares the main environment and has no environment of its own; install it with: "
        "pip install 'evoledger[box2d]' (families with their own environment: dm-control, metaworld, nle, "
        "own-env-test, robosuite)"
    )


def test_a_missing_family_venv_is_listed_and_every_command_names_env_install(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "envs" / OWN_ENV_FAMILY
    listed = json.loads(cli("env", "list", "--json").stdout)
    assert listed["root"] == str(tmp_path / "envs")
    (row,) = [r for r in listed["families"] if r["family"] == OWN_ENV_FAMILY]
    assert (row["state"], row["bytes"]) == ("missing", None)
    assert row["problem"] == f"no environment at {folder}; run: evoledger env install {OWN_ENV_FAMILY}"
    benchmarks = json.loads(cli("benchmarks", "--json").stdout)
    (entry,) = [b for b in benchmarks if b["name"] == OWN_ENV_NAME]
    assert (entry["installed"], entry["install_command"]) == (False, f"evoledger env install {OWN_ENV_FAMILY}")
    assert _error(cli("evaluate", "-b", OWN_ENV_NAME, "-n", "1")) == (
        f"error: {OWN_ENV_NAME} needs the optional extra {OWN_ENV_FAMILY!r} (module 'evoledger_own_env_probe' is not "
        f"installed; its workers run in a venv of their own: not installed); install it with: evoledger env install "
        f"{OWN_ENV_FAMILY}"
    )
    assert _error(cli("env", "path", OWN_ENV_FAMILY)).startswith(
        f"error: family {OWN_ENV_FAMILY!r} has no environment: no environment at {folder}"
    )
    removed = cli("env", "remove", OWN_ENV_FAMILY)
    assert (removed.returncode, removed.stdout.strip()) == (0, f"{OWN_ENV_FAMILY}: no environment at {folder}")
    assert not (tmp_path / "envs").exists()


def test_env_help_shows_examples(cli: Cli) -> None:
    done = cli("env", "--help")
    assert done.returncode == 0
    assert "evoledger env install dm-control" in done.stdout
    assert "$EVOLEDGER_ENVS" in done.stdout
