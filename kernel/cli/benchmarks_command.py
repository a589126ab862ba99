"""``evoledger benchmarks [NAME]``: list the registered Benchmarks, or describe one: settings, spaces, score rule."""

from __future__ import annotations

import json
from typing import Any

import click
from evoledger.kernel.cli.config_options import allowed_values, type_name
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity_options
from evoledger.kernel.cli.terminal_text import cell
from evoledger.kernel.registry import default_registry
from rich.console import Console
from rich.table import Table

__all__ = ["benchmarks_command"]


def _settings(name: str) -> list[dict[str, Any]]:
    model = default_registry().config_model(name)
    if model is None:
        return []
    return [
        {
            "key": key,
            "type": type_name(field.annotation),
            "default": field.get_default(call_default_factory=True),
            "allowed": allowed_values(field),
            "description": field.description or "",
        }
        for key, field in model.model_fields.items()
    ]


def _score_rule(spec: Any) -> str:
    if spec.scoring is None:
        return "the Benchmark's own Feedback score (an audit cannot recompute it)"
    return str(spec.scoring.describe())


def _describe(name: str, as_json: bool) -> None:
    spec = default_registry().make(name).spec
    settings = _settings(name)
    if as_json:
        echo_json({"name": name, "spec": spec.model_dump(mode="json"), "settings": settings})
        return
    console = Console()
    console.print(cell(f"{name} ({spec.id})"), style="bold")
    console.print(cell(spec.description))
    facts = Table(show_header=False, box=None)
    facts.add_column("what", style="bold", no_wrap=True)
    facts.add_column("value")
    facts.add_row("score", cell(f"{spec.primary_metric}, {spec.score_direction}d: {_score_rule(spec)}"))
    facts.add_row("max steps", str(spec.max_episode_steps))
    facts.add_row("observations", cell(json.dumps(dict(spec.observation_space))))
    facts.add_row("actions", cell(json.dumps(dict(spec.action_space))))
    console.print(facts)
    table = Table(title=cell(f"--set KEY=VALUE settings of {name}"))
    for column in ("key", "type", "default", "allowed", "what it does"):
        table.add_column(column, no_wrap=column == "key")
    for s in settings:
        table.add_row(
            cell(s["key"]), s["type"], cell(json.dumps(s["default"])), cell(s["allowed"]), cell(s["description"])
        )
    if not settings:
        table.add_row("(none)", "", "", "", "this Benchmark takes no settings")
    console.print(table)


@click.command("benchmarks")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the specs as JSON.")
@verbosity_options
def benchmarks_command(name: str | None, as_json: bool) -> None:
    """List the registered Benchmarks, or describe NAME: its --set settings, spaces and score rule.

    \b
    Examples:
      evoledger benchmarks
      evoledger benchmarks frozen-lake
      evoledger benchmarks --json
    """
    if name is not None:
        _describe(name, as_json)
        return
    registry = default_registry()
    specs = {n: registry.make(n).spec for n in registry.names()}
    if as_json:
        echo_json({n: spec.model_dump(mode="json") for n, spec in specs.items()})
        return
    table = Table(title="Benchmarks (evoledger benchmarks NAME describes one)")
    table.add_column("name", no_wrap=True, min_width=max(map(len, specs), default=4))
    for column in ("metric", "direction", "max steps"):
        table.add_column(column)
    for n, spec in specs.items():
        table.add_row(cell(n), cell(spec.primary_metric), spec.score_direction, str(spec.max_episode_steps))
    Console().print(table)
