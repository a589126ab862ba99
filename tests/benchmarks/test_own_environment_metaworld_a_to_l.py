"""Meta-World's ids from assembly to lever-pull (28 of 52) through the CLI (``pytest -m catalog``): ``evaluate``, a
built-in-Agent ``run`` and ``replay --execute`` of each id, as tests/support/own_environment_cli.py says (a file of
its own, so that pytest-xdist's ``--dist loadfile`` runs it beside the other families' files).
"""

from __future__ import annotations

from typing import Final

import pytest
from evoledger.tests.support.own_environment_cli import check_evaluate_run_and_replay, own_environment_names

pytestmark = pytest.mark.catalog

NAMES: Final = own_environment_names("metaworld", before="m")


@pytest.mark.parametrize("name", NAMES)
def test_evaluate_run_and_replay_execute_through_the_cli(name: str) -> None:
    check_evaluate_run_and_replay(name)
