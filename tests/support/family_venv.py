"""Running code inside a family's own environment (``evoledger env``), for the tests of a family that has one.

The Host side of such a family (spec, spaces from static tables, Episodes, Feedback, Programs) builds in the main
environment; what only its venv can do (make and step its Environments, compare the static spaces with the real
package's, ``check_benchmark``) is tested in a subprocess started from the venv's interpreter, importing this
checkout's ``evoledger`` (:class:`FamilyVenv`). ``evaluate()`` (:func:`evaluate_programs`) and the CLI (:func:`cli`)
run as a user runs them: the Host in the main environment, the workers in the venv. Where the venv is not installed
and current, such a test is skipped with the command that installs it (CI installs it: ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Final, NamedTuple

import pytest
from evoledger.kernel.authoring import Extra, benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.family_env import family_status
from evoledger.kernel.registry import BenchmarkRef, default_registry

__all__ = ["CHECKOUT", "FamilyVenv", "cli", "evaluate_programs", "family_python", "family_venv", "run_in_family_venv"]

CHECKOUT: Final = Path(__file__).resolve().parents[2]
"""This checkout: the repository root is the ``evoledger`` package."""


def family_python(extra: Extra) -> Path:
    """The interpreter of ``extra``'s family venv; skips the calling test when it is missing or stale."""
    if extra.own_environment is None:
        raise ValueError(f"family {extra.name!r} shares the main environment")
    status = family_status(extra.name, extra.own_environment.requirements)
    if status.state != "installed":
        pytest.skip(f"needs the {extra.name!r} family environment: {status.reason}")
    return status.python


class FamilyVenv(NamedTuple):
    """A family venv's interpreter and a folder holding only ``evoledger`` (a link to this checkout), which its
    scripts import first (before the venv's own link, which may name another checkout) and run in."""

    python: str
    site: Path

    def run(self, code: str, *args: str, timeout: float = 900.0) -> str:
        """Run ``code`` (dedented, ``python -c``) with ``args``; its stdout. Fails the test, quoting the ends of its
        stdout and stderr, when it exits non-zero."""
        inherited = os.environ.get("PYTHONPATH", "")
        path = os.pathsep.join([str(self.site), inherited]) if inherited else str(self.site)
        env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
        command = [self.python, "-c", textwrap.dedent(code), *args]
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=self.site, timeout=timeout, check=False
        )
        assert done.returncode == 0, f"{self.python} -c ... exited {done.returncode}:\n" + (
            done.stdout[-2000:] + done.stderr[-3000:]
        )
        return done.stdout

    def json(self, code: str, *args: str, timeout: float = 900.0) -> Any:
        """Run ``code`` as :meth:`run` does; it prints one JSON document last, which is returned."""
        return json.loads(self.run(code, *args, timeout=timeout).strip().splitlines()[-1])


def family_venv(extra: Extra, site: Path, *, override: str | None = None) -> FamilyVenv:
    """``extra``'s venv, its scripts importing this checkout from ``site`` (an empty folder, given a link to it).

    ``override``: an environment variable that, when set, names the interpreter to use instead (a family's
    ``EVOLEDGER_TEST_*_PYTHON``). Skips the calling test when neither it nor an installed, current venv is there.
    """
    python = (os.environ.get(override) if override else None) or str(family_python(extra))
    link = site / "evoledger"
    if not link.is_symlink():
        link.symlink_to(CHECKOUT, target_is_directory=True)
    return FamilyVenv(python, site)


def run_in_family_venv(extra: Extra, code: str, *, timeout: float = 600.0) -> str:
    """Run ``code`` (``python -c``) with the family venv's interpreter, importing this checkout; its stdout. Fails the
    test, quoting the end of its output, when it exits non-zero; skips it when the venv is missing or stale."""
    with tempfile.TemporaryDirectory(prefix="evs-") as site:
        return family_venv(extra, Path(site)).run(code, timeout=timeout)


def evaluate_programs(
    name: str, *, episodes: int, config: dict[str, Any], record: Path | None = None, seed: int = 3
) -> dict[str, Any]:
    """The baseline's and the heuristic's (where there is one) results through ``evaluate()`` as plain values
    (``score``, ``failures``, ``statuses``, ``steps``, ``content``): the Host here, the workers in the family's venv.
    ``record``: keep each evaluation record under ``record/baseline`` and ``record/heuristic``."""
    ref = BenchmarkRef(name=name, config=config)
    programs = benchmark_programs(default_registry().make(name, config))
    found: dict[str, Any] = {}
    with LocalExecutor(ref) as executor:
        assert executor.python != sys.executable  # the workers start from the family's venv
        for kind in ("baseline", "heuristic"):
            program = getattr(programs, kind)
            if program is None:
                continue
            settings = EvaluationConfig(episodes=episodes, seed=seed)
            result = evaluate(
                program, ref, executor=executor, config=settings, record_to=record / kind if record else None
            )
            found[kind] = {
                "score": result.score,
                "failures": result.failures,
                "statuses": [e.status for e in result.episodes],
                "steps": [e.steps for e in result.episodes],
                "content": result.feedback_content,
            }
    return found


def cli(*args: str, cwd: Path, timeout: float = 1800.0) -> str:
    """``evoledger ARGS`` in ``cwd`` as a user runs it (the Host in this environment); its stdout. Fails the test,
    quoting the ends of its output, when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-m", "evoledger", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"evoledger {' '.join(args)} exited {done.returncode}:\n" + (
        done.stdout[-2000:] + done.stderr[-2000:]
    )
    return done.stdout
