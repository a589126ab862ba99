"""Parametrizing a test over the registered Benchmarks: the core ones by default, the families' under ``catalog``.

The core install's Benchmarks (no extra: classic-control, toy-text, toy) run in the default suite. A family that
needs an optional extra (box2d, mujoco, minigrid, ...) has too many Benchmarks for the default suite's time budget:
its rows are marked ``catalog`` (``pytest -m catalog`` runs them) and skipped, with the install command, where the
extra is missing. So are the contests (:data:`CATALOG_ONLY_FAMILIES`): core, but their Episodes are whole contest
cases of 500 to 1,000 turns (their own test modules check them quickly by default).
"""

from __future__ import annotations

from typing import Any

import pytest
from evoledger.kernel.registry import default_registry

__all__ = ["CATALOG_ONLY_FAMILIES", "benchmark_params", "core_names"]

CATALOG_ONLY_FAMILIES = frozenset({"atcoder", "codechef"})
"""Core families whose sweeps run only under ``pytest -m catalog`` (long Episodes)."""


def core_names() -> list[str]:
    """The registered names the core install runs (no optional extra), sorted."""
    return [e.name for e in default_registry().entries() if e.extra is None]


def benchmark_params(*, in_host: bool = False) -> list[Any]:
    """Every registered name as a ``pytest.param``: plain for the core, ``catalog``-marked for a family's.

    ``in_host``: the test makes Environments in its own process (``check_benchmark``), which a family with its own
    environment (``evoledger env``) cannot do outside its venv: its rows are skipped, saying so (its own tests check
    it inside the venv).
    """
    params = []
    for entry in default_registry().entries():
        if entry.extra is None and entry.family not in CATALOG_ONLY_FAMILIES:
            params.append(pytest.param(entry.name, id=entry.name))
            continue
        marks = [pytest.mark.catalog]
        extra = entry.extra
        if extra is not None and not extra.installed:
            why = f"needs the extra {extra.name!r}: {extra.install_command}"
            marks.append(pytest.mark.skip(reason=why))
        elif in_host and extra is not None and extra.own_environment is not None and extra.missing_module():
            why = f"its Environments run only in the {extra.name!r} venv (evoledger env); its own tests check it there"
            marks.append(pytest.mark.skip(reason=why))
        params.append(pytest.param(entry.name, id=entry.name, marks=marks))
    return params
