"""Test-wide settings: Hypothesis profiles.

``default`` keeps the README's test command quick; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) runs more examples and longer stateful programs for tests that take their
example counts from the profile (the protocol and ledger state machines do). Every test runs with
``EVOLEDGER_HOME`` in a temporary folder, so Runs recorded through the CLI never touch the user's signing key.
``readme_main_run`` is the README's main job, run once for the session by the tests that only read it.
Test files holding a ``slow`` test are collected first (see ``pytest_collection_modifyitems``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.tests.support.readme_run import MainJobRun, run_main_job
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=25,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci",
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files holding a ``slow`` test first, in their usual order, then the rest.

    xdist hands whole files to its workers in collection order (``--dist loadfile --no-loadscope-reorder``): a long
    file handed out last runs alone at the end while the other CPUs idle. Handed out first, the short files fill in
    around it. (xdist's own reordering, by number of tests, put the few-but-long files last.)"""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # stable: each file's tests keep their order


@pytest.fixture(autouse=True, scope="session")
def _private_evoledger_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every command a test runs signs with a key in a temporary EVOLEDGER_HOME, never the user's own key."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVOLEDGER_HOME", str(tmp_path_factory.mktemp("evoledger-home") / "home"))
        yield


@pytest.fixture(scope="session")
def readme_main_run(_private_evoledger_home: None) -> Iterator[MainJobRun]:
    """The README's main job (the default CartPole Run), run once; tests read it and must not change it."""
    root = Path(tempfile.mkdtemp(prefix="evm-", dir="/tmp"))  # short: Unix socket paths are limited
    try:
        yield run_main_job(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
