"""Every registered Benchmark of every installed family, smoke-tested: built, one short baseline Episode, Feedback.

The default run covers the whole catalogue (~250 Benchmarks with every extra installed) within seconds, so it does
not start a worker per Benchmark (a fresh interpreter each). It runs the execution layer a worker runs, in this
process: one zygote (re-given each Benchmark's public template), a fresh Policy child per Episode speaking the real
channel, the Benchmark's Environment stepped by :class:`EpisodeRunner` with its action checks and trajectory
recording, then the Benchmark's ``feedback()`` on the outcome's record. Each Benchmark's first Episode is capped at
a few steps (its ``max_episode_steps`` setting).

Under ``pytest -m catalog`` the long checks run for every Benchmark instead, through the real ``evaluate()`` and a
worker per Benchmark: ``check_benchmark`` (tests/benchmarks/test_conformance.py) and the heuristic Program beating
the baseline (tests/benchmarks/test_programs_through_evaluate.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import pytest
from evoledger.benchmarks.minigrid import MissingPatternError
from evoledger.kernel.authoring import Benchmark, Feedback, benchmark_programs, derive_seed
from evoledger.kernel.execution.episode_runner import EpisodeRunner
from evoledger.kernel.execution.tasks import EpisodeTask, PolicyLimits
from evoledger.kernel.execution.zygote import Zygote
from evoledger.kernel.registry import BenchmarkRegistry, default_registry
from evoledger.ledger.errors import ConfigError

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

_STEPS: Final = 4
"""The smoke Episode's step cap."""
_NAME: Final = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*/[a-z0-9]+(-[a-z0-9]+)*")
"""``family/task``, lowercase kebab-case on both sides."""

ENTRIES = default_registry().entries()
INSTALLED = [
    e.name
    for e in ENTRIES
    if e.extra is None or (e.extra.installed and not (e.extra.own_environment and e.extra.missing_module()))
]
"""Every Benchmark this process can step: not a family whose Environments run only in its own venv (evoledger env;
its own tests step each of its Benchmarks there)."""


def _short(name: str) -> Benchmark:
    """``name`` with its Episodes capped at a few steps (by its ``max_episode_steps`` setting, where it has one)."""
    try:
        return default_registry().make(name, {"max_episode_steps": _STEPS})
    except ConfigError as exc:  # no such setting: its own length
        if isinstance(exc, MissingPatternError):  # minigrid's WFC patterns: data no pip install provides
            pytest.skip(str(exc))
        return default_registry().make(name)


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    """One zygote for every Benchmark of this module, forked from this (single-threaded) process."""
    forked = Zygote.fork(None)
    yield forked
    forked.close()


def _smoke(benchmark: Benchmark, zygote: Zygote) -> tuple[Any, Feedback]:
    spec = benchmark.spec
    zygote.send_template(
        benchmark.observation_space, benchmark.action_space, spec.metadata, spec.environment_parameters
    )
    runner = EpisodeRunner(benchmark, zygote)
    (episode,) = benchmark.episodes("train", seed=11, count=1)
    task = EpisodeTask(
        episode,
        benchmark_programs(benchmark).baseline,
        derive_seed(11, "policy", episode.index),
        PolicyLimits(),
    )
    try:
        outcome = runner.run(task)
    finally:
        while zygote.child_coming:  # a child forked ahead holds this Benchmark's template: never hand it on
            zygote.discard(zygote.take_child())
    return outcome, benchmark.feedback([outcome.to_record(with_trajectory=True)])


def test_every_packaged_name_is_family_slash_task_with_a_catalogue_row() -> None:
    packaged = BenchmarkRegistry(entry_point_group=None).entries()  # evoledger.benchmarks only, no plugin
    assert packaged, "no Benchmark registered"
    for entry in packaged:
        assert _NAME.fullmatch(entry.name), f"{entry.name!r} is not family/task in lowercase kebab-case"
        assert entry.name.startswith(f"{entry.family}/"), entry
        assert entry.summary, f"{entry.name} has no summary: give it a CatalogEntry in its module's CATALOG"
        for alias in entry.aliases:
            assert default_registry().canonical(alias) == entry.name


@pytest.mark.parametrize("name", INSTALLED)
def test_every_installed_benchmark_runs_a_short_baseline_episode_and_gives_feedback(name: str, zygote: Zygote) -> None:
    benchmark = _short(name)
    outcome, feedback = _smoke(benchmark, zygote)
    assert outcome.status == "ok", (name, outcome.status, outcome.failure_message, outcome.traceback)
    assert 1 <= outcome.steps <= benchmark.spec.max_episode_steps
    assert outcome.trajectory
    assert feedback.score is None or isinstance(feedback.score, float)
