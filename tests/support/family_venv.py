"""Running code inside a family's own environment (``evoledger env``), for the tests of a family that has one.

The Host side of such a family (spec, spaces from static tables, Episodes, Feedback, Programs) builds in the main
environment; what only its venv can do (make and step its Environments, compare the static spaces with the real
package's, ``check_benchmark``) is tested in a subprocess started from the venv's interpreter. Where the venv is not
installed and current, such a test is skipped with the command that installs it (CI installs it: ``.ci/run``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from evoledger.kernel.authoring import Extra
from evoledger.kernel.family_env import family_status

__all__ = ["family_python", "run_in_family_venv"]


def family_python(extra: Extra) -> Path:
    """The interpreter of ``extra``'s family venv; skips the calling test when it is missing or stale."""
    if extra.own_environment is None:
        raise ValueError(f"family {extra.name!r} shares the main environment")
    status = family_status(extra.name, extra.own_environment.requirements)
    if status.state != "installed":
        pytest.skip(f"needs the {extra.name!r} family environment: {status.reason}")
    return status.python


def run_in_family_venv(extra: Extra, code: str, *, timeout: float = 600.0) -> str:
    """Run ``code`` (``python -c``) with the family venv's interpreter; its stdout. Fails the test, quoting the end of
    its stderr, when it exits non-zero; skips it when the venv is missing or stale."""
    python = family_python(extra)
    done = subprocess.run(
        [str(python), "-c", code], env=dict(os.environ), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{python} -c ... exited {done.returncode}:\n{done.stderr[-4000:]}"
    return done.stdout
