"""Family environments without making a real one: where they live, their marker, staleness, failed installs.

A "venv" here is a folder with a ``bin/python`` link to this interpreter and a marker, which is all
:func:`family_status` looks at. The real venvs (pip, a worker started from one) are in test_own_environment.py.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from evoledger.kernel.authoring import Extra, OwnEnvironment
from evoledger.kernel.family_env import (
    MARKER_NAME,
    WORKER_REQUIREMENTS,
    Marker,
    environments_root,
    evoledger_source,
    family_folder,
    family_status,
    install_environment,
    install_requirements,
    read_marker,
    remove_environment,
    requirements_digest,
    worker_python,
)
from evoledger.ledger.errors import ConfigError, InfraError, MissingExtraError

FAMILY = "demo-family"
REQUIREMENTS = ("gymnasium==1.2.0",)
REPOSITORY = Path(__file__).resolve().parents[3]


def _fake_venv(root: Path, **changes: object) -> Path:
    """A folder that family_status takes for ``FAMILY``'s venv made from ``REQUIREMENTS`` (``changes``: its marker)."""
    folder = root / FAMILY
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    full = install_requirements(REQUIREMENTS)
    marker = Marker(
        family=FAMILY,
        requirements=full,
        requirements_digest=requirements_digest(full),
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        base_python=sys.executable,
        source=str(evoledger_source()),
        created="2026-12-02T00:00:00+00:00",
        install_seconds=1.0,
        versions={"gymnasium": "1.2.0"},
    )
    (folder / MARKER_NAME).write_text(dataclasses.replace(marker, **changes).to_json())  # type: ignore[arg-type]
    return folder


def test_environments_live_in_evoledger_envs_else_the_xdg_cache_else_the_home_cache(tmp_path: Path) -> None:
    assert environments_root({"EVOLEDGER_ENVS": str(tmp_path / "e")}) == tmp_path / "e"
    assert environments_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "evoledger" / "envs"
    assert environments_root({}) == Path.home() / ".cache" / "evoledger" / "envs"
    with pytest.raises(ConfigError, match="cannot name an environment folder"):
        family_folder("../escape", tmp_path)


def test_a_missing_venv_says_which_command_installs_it(tmp_path: Path) -> None:
    status = family_status(FAMILY, REQUIREMENTS, tmp_path)
    assert (status.state, status.path) == ("missing", tmp_path / FAMILY)
    assert status.reason == f"no environment at {tmp_path / FAMILY}; run: evoledger env install {FAMILY}"


def test_a_venv_made_from_what_the_family_declares_now_is_installed(tmp_path: Path) -> None:
    folder = _fake_venv(tmp_path)
    status = family_status(FAMILY, REQUIREMENTS, tmp_path)
    assert (status.state, status.reason, status.python) == ("installed", "", folder / "bin" / "python")
    assert status.marker is not None
    assert status.marker.versions == {"gymnasium": "1.2.0"}
    assert read_marker(folder) == status.marker


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"requirements_digest": "sha256:0"}, "the family's requirements changed since it was installed"),
        ({"python": "3.10"}, f"it was made for Python 3.10, this is Python {sys.version_info.major}."),
        ({"source": "/elsewhere/evoledger"}, "it serves the evoledger source at /elsewhere/evoledger, not this one"),
    ],
)
def test_a_venv_made_from_other_requirements_python_or_source_is_stale(
    tmp_path: Path, changes: dict[str, str], why: str
) -> None:
    _fake_venv(tmp_path, **changes)
    status = family_status(FAMILY, REQUIREMENTS, tmp_path)
    assert status.state == "stale"
    assert status.reason.startswith(f"stale: {why}"), status.reason
    assert status.reason.endswith(f"; run: evoledger env install {FAMILY}")


def test_declaring_other_requirements_makes_an_installed_venv_stale(tmp_path: Path) -> None:
    _fake_venv(tmp_path)
    assert family_status(FAMILY, ("gymnasium==1.1.0",), tmp_path).state == "stale"


def test_a_folder_without_a_readable_marker_or_interpreter_is_stale(tmp_path: Path) -> None:
    folder = _fake_venv(tmp_path)
    (folder / MARKER_NAME).write_text("{not json")
    assert family_status(FAMILY, REQUIREMENTS, tmp_path).reason.startswith(f"stale: {folder / MARKER_NAME} is missing")
    (folder / MARKER_NAME).unlink()
    _fake_venv(tmp_path / "other")
    (tmp_path / "other" / FAMILY / "bin" / "python").unlink()
    assert "no longer runs" in family_status(FAMILY, REQUIREMENTS, tmp_path / "other").reason


def test_an_own_environment_extra_is_installed_by_its_venv_and_requires_env_install_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOLEDGER_ENVS", str(tmp_path))
    extra = Extra(FAMILY, ("evoledger_no_such_module_xyz",), own_environment=OwnEnvironment(REQUIREMENTS, "a pin"))
    assert extra.install_command == f"evoledger env install {FAMILY}"
    assert not extra.installed
    with pytest.raises(MissingExtraError) as missing:
        extra.require("demo/task")
    assert str(missing.value) == (
        f"demo/task needs the optional extra {FAMILY!r} (module 'evoledger_no_such_module_xyz' is not installed; its "
        f"workers run in a venv of their own: not installed); install it with: evoledger env install {FAMILY}"
    )
    _fake_venv(tmp_path, python="3.10")
    with pytest.raises(MissingExtraError, match=r"venv of their own: stale: it was made for Python 3\.10, this is"):
        extra.require("demo/task")
    (tmp_path / FAMILY / MARKER_NAME).unlink()
    (tmp_path / FAMILY / "bin" / "python").unlink()
    (tmp_path / FAMILY / "bin").rmdir()
    (tmp_path / FAMILY).rmdir()
    _fake_venv(tmp_path)
    assert extra.installed
    extra.require("demo/task")  # nothing raised: its workers will start from the venv


def test_an_extra_whose_modules_import_here_is_installed_whatever_its_venv() -> None:
    extra = Extra("numpy-family", ("numpy",), own_environment=OwnEnvironment(("numpy<1",), "a pin"))
    assert extra.installed
    extra.require("x/y")


def test_workers_start_from_the_main_interpreter_while_no_family_venv_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOLEDGER_ENVS", str(tmp_path / "none"))
    assert worker_python("classic-control/cartpole") == sys.executable
    assert worker_python("evoledger.benchmarks.toy:make_toy_counter") == sys.executable
    monkeypatch.setenv("EVOLEDGER_ENVS", str(tmp_path))
    _fake_venv(tmp_path)  # some family's venv: a Benchmark of a shared family still starts from the main one
    assert worker_python("classic-control/cartpole") == sys.executable


def test_the_worker_requirements_are_the_projects_own_lower_bounds() -> None:
    declared = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0]: d for d in declared}
    for requirement in WORKER_REQUIREMENTS:
        name = re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0]
        assert bounds[name].split(";")[0].strip() == requirement


def _leftovers(root: Path) -> list[str]:
    return sorted(entry.name for entry in root.iterdir()) if root.exists() else []


@pytest.mark.slow  # pip starts, and fails: a few seconds
def test_a_failed_install_leaves_nothing_keeps_the_previous_venv_and_sweeps_killed_installs(tmp_path: Path) -> None:
    previous = _fake_venv(tmp_path)
    before = (previous / MARKER_NAME).read_text()
    killed = tmp_path / f".{FAMILY}.tmp-999999999-abc"  # no such pid: an install of the family SIGKILLed
    (killed / "lib").mkdir(parents=True)
    running = tmp_path / f".{FAMILY}.tmp-{os.getppid()}-abc"  # another install of the family, still running
    running.mkdir()
    lines: list[str] = []
    broken = (f"evoledger-no-such-package @ {(tmp_path / 'missing-0.1-py3-none-any.whl').as_uri()}",)
    with pytest.raises(InfraError, match=r"^pip install failed \(exit status \d+\): ERROR"):
        install_environment(FAMILY, broken, root=tmp_path, on_line=lines.append)
    assert _leftovers(tmp_path) == [running.name, FAMILY]
    assert (previous / MARKER_NAME).read_text() == before
    assert lines[0].startswith("creating a venv")
    assert lines[1].startswith("pip install evoledger-no-such-package")


@pytest.mark.slow  # pip starts, and is stopped: a few seconds
def test_an_interrupted_install_stops_pip_and_leaves_nothing(tmp_path: Path) -> None:
    def interrupt(line: str) -> None:
        if not line.startswith(("creating", "pip install")):  # pip's first line: pip is running
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        install_environment("other-family", ("gymnasium==1.2.0",), root=tmp_path, on_line=interrupt)
    assert _leftovers(tmp_path) == []


def test_an_executor_loads_no_benchmark_module_for_a_benchmark_no_installed_venv_serves(tmp_path: Path) -> None:
    folder = _fake_venv(tmp_path, benchmarks=("demo/task", "demo-old"))
    assert read_marker(folder).benchmarks == ("demo/task", "demo-old")  # type: ignore[union-attr]
    probe = (
        "import sys\n"
        "from evoledger.kernel.family_env import worker_python\n"
        "loaded = 'evoledger.benchmarks.toy'\n"
        "print(worker_python('classic-control/cartpole') == sys.executable, loaded in sys.modules)\n"
        "print(worker_python('demo/added-since') == sys.executable, loaded in sys.modules)\n"
    )
    env = {**os.environ, "EVOLEDGER_ENVS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # cartpole: no marker names it or its prefix, so the registry was not loaded; demo/added-since: same prefix as
    # demo/task, so it was (and, the name being unknown, its workers start from the main interpreter)
    assert done.stdout.split() == ["True", "False", "True", "True"]


def test_removing_a_venv_leaves_nothing_of_it(tmp_path: Path) -> None:
    folder = _fake_venv(tmp_path)
    assert remove_environment(FAMILY, tmp_path) == folder
    assert _leftovers(tmp_path) == []
    assert remove_environment(FAMILY, tmp_path) is None
