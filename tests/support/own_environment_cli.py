"""One Benchmark id of a family with its own environment through the CLI: ``evaluate`` of the baseline, a built-in-Agent
``run`` and ``replay --execute`` of that Run (the ``pytest -m catalog`` sweep of ``test_own_environment_*.py``).

The CLI runs as a user runs it: the Host in the main environment, the workers started from the family's venv
(``evoledger env install FAMILY``; CI installs them). An id whose family venv is not installed and current is skipped,
naming that command. Each id gets the smallest setting that still steps (``max_episode_steps``, which every such
family has) and a tiny budget: what is left is the three commands' fixed costs (start-up, a worker per command that
imports the family's package, the Agent's process), 13-15 CPU-minutes for the hundred ids, 17 minutes serially on 2
cores. The ids are spread over several test files (a family each, Meta-World's in two halves) so that pytest-xdist's
``--dist loadfile`` gives them to different workers.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Final

from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.tests.support.family_venv import cli, family_python

__all__ = ["OWN_ENVIRONMENT", "SMALL", "STEPS", "check_evaluate_run_and_replay", "own_environment_names"]

OWN_ENVIRONMENT: Final = {
    e.name: e.extra for e in default_registry().entries() if e.extra is not None and e.extra.own_environment
}
"""Every Benchmark id whose family has its own environment, with the family's extra."""

STEPS: Final = 4
"""``max_episode_steps`` of every Episode: a few steps, so that each command still steps its Environments."""
SMALL: Final = ("--episode-budget", "1", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5")
"""One training Episode, one Validation and one Assessment Episode: the whole Run, as small as it goes."""


def own_environment_names(family: str, *, since: str = "", before: str = "\uffff") -> list[str]:
    """The ids of ``family`` (an extra's name), sorted; only those whose task (the part after the ``/``) sorts at or
    after ``since`` and before ``before``."""
    return sorted(
        name
        for name, extra in OWN_ENVIRONMENT.items()
        if extra.name == family and since <= name.partition("/")[2] < before
    )


def check_evaluate_run_and_replay(name: str) -> None:
    """``evaluate`` one short baseline Episode of ``name``, ``run`` the built-in Agent on it and ``replay --execute``
    the Run, in a fresh folder; skips the calling test when the family's venv is missing or stale."""
    family_python(OWN_ENVIRONMENT[name])  # skips, naming evoledger env install, without the family's venv
    root = Path(tempfile.mkdtemp(prefix="evo-", dir="/tmp"))  # short: Unix socket paths are limited
    try:
        _check(name, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check(name: str, run_root: Path) -> None:
    short = ("--set", f"max_episode_steps={STEPS}")
    baseline = benchmark_programs(default_registry().make(name)).baseline
    evaluated = json.loads(
        cli("evaluate", str(baseline), "--benchmark", name, *short, "--episodes", "1", "--json", cwd=run_root)
    )
    assert [e["status"] for e in evaluated["episodes"]] == ["ok"], evaluated["episodes"]
    assert 1 <= evaluated["episodes"][0]["steps"] <= STEPS
    assert evaluated["score"] is not None
    record = run_root / "run"
    cli("run", name, *short, *SMALL, "--agent-isolation", "local", "--record-to", str(record), cwd=run_root)
    report = json.loads((record / "host" / "report.json").read_text(encoding="utf-8"))
    assert report["reason"] == "finished", report
    assert report["selected"] is not None
    assert report["assessment_score"] is not None
    replayed = json.loads(cli("replay", str(record), "--execute", "--json", cwd=run_root))
    assert replayed["ok"] is True, replayed
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert execution["status"] == "pass", execution
    assert execution["summary"].startswith("3 of 3 Episodes reproduced"), execution
