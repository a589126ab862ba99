"""A Benchmark's own default Policy limits, used by ``run`` and ``evaluate`` where the command line sets none.

A Benchmark's catalogue row may name limits its Programs need (:attr:`CatalogEntry.default_limits`): a contest whose
one ``act`` call solves the whole case needs more than the usual 2 s per ``act``. A flag the user typed always wins;
the limits used are recorded in the Run's config (and the evaluation record) as any other.
"""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource
from evoledger.kernel.cli.config_options import POLICY_LIMIT_FLAGS
from evoledger.kernel.execution.tasks import PolicyLimits
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import ConfigError

__all__ = ["apply_benchmark_limits"]


def apply_benchmark_limits(benchmark: str, limits: dict[str, Any], ctx: click.Context) -> list[str]:
    """Set in ``limits`` (the parsed ``limits`` mapping) each default limit of ``benchmark`` whose flag was not given;
    one phrase per limit set (``--act-timeout 60``), for the command to show."""
    registry = default_registry()
    if not registry.knows(benchmark):  # an import string or an unknown name: the factory judges it later
        return []
    applied: list[str] = []
    for name, value in registry.entry(benchmark).default_limits.items():
        if name not in PolicyLimits.model_fields:
            known = ", ".join(PolicyLimits.model_fields)
            raise ConfigError(
                f"{benchmark}'s catalogue row declares a default for {name!r}, which is not a Policy limit ({known})"
            )
        flag = POLICY_LIMIT_FLAGS.get(f"limits.{name}", ("--" + name.replace("_", "-"),))[0]
        if ctx.get_parameter_source(f"limits_{name}") in (ParameterSource.DEFAULT, None):
            limits[name] = value
            applied.append(f"{flag} {value:g}")
    return applied
