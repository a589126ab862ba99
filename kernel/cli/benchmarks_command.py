"""``evoledger benchmarks``: list the registered Benchmarks."""

from __future__ import annotations

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.registry import default_registry
from rich.console import Console
from rich.table import Table

__all__ = ["benchmarks_command"]


@click.command("benchmarks")
@click.option("--json", "as_json", is_flag=True, help="Print the specs as JSON.")
def benchmarks_command(as_json: bool) -> None:
    """List the registered Benchmarks with their score and limits.

    \b
    Example:
      evoledger benchmarks --json
    """
    registry = default_registry()
    specs = {name: registry.make(name).spec for name in registry.names()}
    if as_json:
        echo_json({name: spec.model_dump(mode="json") for name, spec in specs.items()})
        return
    table = Table(title="Benchmarks")
    for column in ("name", "id", "metric", "direction", "max steps"):
        table.add_column(column)
    for name, spec in specs.items():
        table.add_row(name, spec.id, spec.primary_metric, spec.score_direction, str(spec.max_episode_steps))
    Console().print(table)
