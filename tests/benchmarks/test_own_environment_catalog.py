"""The CLI sweep of every Benchmark of every family with its own environment (``pytest -m catalog``) covers them all.

Each id's ``evaluate``, built-in-Agent ``run`` and ``replay --execute`` is in a ``test_own_environment_<family>.py``
(tests/support/own_environment_cli.py): 17 minutes serially on 2 cores in one file, as pytest-xdist's
``--dist loadfile`` ran it; split by family (Meta-World's 52 ids in two halves), the files go to different workers.
Whole Episodes, conformance and heuristics are in each family's ``test_<family>_venv.py``.
"""

from __future__ import annotations

import pytest
from evoledger.tests.benchmarks import (
    test_own_environment_dm_control,
    test_own_environment_metaworld_a_to_l,
    test_own_environment_metaworld_m_to_z,
    test_own_environment_nle,
    test_own_environment_robosuite,
)
from evoledger.tests.support.own_environment_cli import OWN_ENVIRONMENT

pytestmark = pytest.mark.catalog

SWEEPS = (
    test_own_environment_dm_control,
    test_own_environment_metaworld_a_to_l,
    test_own_environment_metaworld_m_to_z,
    test_own_environment_nle,
    test_own_environment_robosuite,
)


def test_the_sweep_covers_every_family_with_its_own_environment() -> None:
    families: dict[str, int] = {}
    for extra in OWN_ENVIRONMENT.values():
        families[extra.name] = families.get(extra.name, 0) + 1
    assert families == {"dm-control": 28, "nle": 1, "metaworld": 52, "robosuite": 19}  # issue 18's ids
    swept = [name for sweep in SWEEPS for name in sweep.NAMES]
    assert sorted(swept) == sorted(OWN_ENVIRONMENT)  # every id in exactly one file
    assert [len(sweep.NAMES) for sweep in SWEEPS] == [28, 28, 24, 1, 19]
