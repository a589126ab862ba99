"""The README's set-up commands, and one run of its main job that several tests read.

The main job (``evoledger run``, the default CartPole Run with the built-in Agent) is the slowest single command of
the default suite. ``readme_main_run`` runs it once per session, exactly as the README spells it plus ``--seed 1``
(so that what it reaches is reproducible), through the installed ``evoledger`` on ``PATH``; the README test and the
built-in Agent's CartPole test each read that one Run instead of running their own.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MainJobRun", "main_job_argv", "run_main_job", "setup_commands"]

ROOT = Path(__file__).resolve().parents[2]
SEED = "1"


def setup_commands() -> list[str]:
    """The README's marked set-up block, one command a line."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- setup-commands:.*?-->\s*```bash\n(.*?)```", text, re.S)
    assert match, "README.md lost its marked set-up block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def main_job_argv() -> list[str]:
    """The README's main job without its install half: ``evoledger run ...`` as words."""
    return shlex.split(setup_commands()[0].split("&&", 1)[1].strip())


@dataclass(frozen=True)
class MainJobRun:
    """One finished run of the README's main job: the words it ran, its output, and the Run directory it made."""

    argv: list[str]
    done: subprocess.CompletedProcess[str]
    run_dir: Path


def run_main_job(cwd: Path) -> MainJobRun:
    """Run the README's main job (plus ``--seed 1``) in ``cwd``, where it records under ``runs/`` by default."""
    argv = [*main_job_argv(), "--seed", SEED]
    bin_dir = Path(sys.executable).parent  # evoledger and evoledger-session, as the README's install puts them
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    runs = sorted((cwd / "runs").iterdir()) if (cwd / "runs").is_dir() else []
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert len(runs) == 1, f"the main job made {runs} under runs/, not one Run directory"
    return MainJobRun(argv=argv, done=done, run_dir=runs[0])
