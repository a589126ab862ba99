"""Every Benchmark of every family with its own environment through the CLI (``pytest -m catalog``): ``evaluate`` of
the baseline, a built-in-Agent ``run`` and ``replay --execute`` of that Run, one id at a time.

The CLI runs as a user runs it: the Host in the main environment, the workers started from the family's venv
(``evoledger env install FAMILY``; CI installs them). An id whose family venv is not installed and current is skipped,
naming that command. Each id gets the smallest setting that still steps (``max_episode_steps``, which every such
family has) and a tiny budget: what is left is the three commands' fixed costs (start-up, a worker per command that
imports the family's package, the Agent's process), 13-15 CPU-minutes for the hundred ids. Measured on 2 cores: 17
minutes serially (as the default ``--dist loadfile`` runs this one file) at load 2-4; 52 minutes with ``-n 2 --dist
load`` at load 10-20. Whole Episodes, conformance and heuristics are in each family's ``test_<family>_venv.py``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.tests.support.family_venv import cli, family_python

pytestmark = pytest.mark.catalog

OWN_ENVIRONMENT: Final = {
    e.name: e.extra for e in default_registry().entries() if e.extra is not None and e.extra.own_environment
}
"""Every Benchmark id whose family has its own environment, with the family's extra."""

STEPS: Final = 4
"""``max_episode_steps`` of every Episode: a few steps, so that each command still steps its Environments."""
SMALL: Final = ("--episode-budget", "1", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5")
"""One training Episode, one Validation and one Assessment Episode: the whole Run, as small as it goes."""


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evo-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_sweep_covers_every_family_with_its_own_environment() -> None:
    families: dict[str, int] = {}
    for extra in OWN_ENVIRONMENT.values():
        families[extra.name] = families.get(extra.name, 0) + 1
    assert families == {"dm-control": 28, "nle": 1, "metaworld": 52, "robosuite": 19}  # issue 18's ids


@pytest.mark.parametrize("name", sorted(OWN_ENVIRONMENT))
def test_evaluate_run_and_replay_execute_through_the_cli(name: str, run_root: Path) -> None:
    family_python(OWN_ENVIRONMENT[name])  # skips, naming evoledger env install, without the family's venv
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
