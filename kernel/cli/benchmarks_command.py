"""``evoledger benchmarks [NAME]``: list every Benchmark of every family, installed or not, or describe one.

The listing reads the families' catalogue rows (:class:`~evoledger.kernel.authoring.CatalogEntry`) and builds no
Benchmark, so a family whose optional extra is missing is listed with the command that installs it. Describing one
builds it (its settings, spaces and score rule); a missing extra is then a one-line error with that command.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import click
from evoledger.kernel.authoring import CatalogEntry
from evoledger.kernel.cli.config_options import allowed_values, type_name
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity_options
from evoledger.kernel.cli.terminal_text import cell
from evoledger.kernel.execution.abi import policy_abis_of
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import UnknownNameError
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
    registry = default_registry()
    spec = registry.make(name).spec
    settings = _settings(name)
    entry = registry.entry(name) if registry.knows(name) else None
    abis = policy_abis_of(name if entry is None else entry.name)
    if as_json:
        row = {} if entry is None else _row(entry)
        echo_json(
            {"name": name, **row, "spec": spec.model_dump(mode="json"), "settings": settings, "policy_abis": list(abis)}
        )
        return
    console = Console()
    console.print(cell(f"{name if entry is None else entry.name} ({spec.id})"), style="bold")
    if entry is not None:
        aliases = f"; also known as {', '.join(entry.aliases)}" if entry.aliases else ""
        console.print(cell(f"family {entry.family}{aliases}"))
    console.print(cell(spec.description))
    facts = Table(show_header=False, box=None)
    facts.add_column("what", style="bold", no_wrap=True)
    facts.add_column("value")
    facts.add_row("score", cell(f"{spec.primary_metric}, {spec.score_direction}d: {_score_rule(spec)}"))
    facts.add_row("max steps", str(spec.max_episode_steps))
    facts.add_row("observations", cell(json.dumps(dict(spec.observation_space))))
    facts.add_row("actions", cell(json.dumps(dict(spec.action_space))))
    facts.add_row("--policy-abi", ", ".join(abis))
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


def _row(entry: CatalogEntry) -> dict[str, Any]:
    """One catalogue row as ``--json`` prints it."""
    extra = entry.extra
    return {
        "name": entry.name,
        "family": entry.family,
        "summary": entry.summary,
        "aliases": list(entry.aliases),
        "extra": None if extra is None else extra.name,
        "installed": extra is None or extra.installed,
        "install_command": None if extra is None else extra.install_command,
    }


def _matches(entry: CatalogEntry, word: str) -> bool:
    """Whether ``word`` is in the name, summary or an alias (ignoring case)."""
    needle = word.casefold()
    return any(needle in text.casefold() for text in (entry.name, entry.summary, *entry.aliases))


def _selected(family: str | None, search: str | None) -> list[CatalogEntry]:
    registry = default_registry()
    entries = registry.entries()
    if family is not None:
        families = registry.families()
        if family not in families:
            close = difflib.get_close_matches(family, families, n=1, cutoff=0.5)
            raise UnknownNameError("family", family, families, close=close, see=f"Families: {', '.join(families)}.")
        entries = [e for e in entries if e.family == family]
    if search is not None:
        entries = [e for e in entries if _matches(e, search)]
    return entries


@click.command("benchmarks")
@click.argument("name", required=False)
@click.option("--family", "-f", metavar="FAMILY", help="Only this family's Benchmarks (e.g. mujoco, minigrid).")
@click.option("--search", "-s", metavar="WORD", help="Only Benchmarks whose name, summary or alias contains WORD.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the rows listed, or the spec of NAME.")
@verbosity_options
def benchmarks_command(name: str | None, family: str | None, search: str | None, as_json: bool) -> None:
    """List every Benchmark of every family, installed or not, or describe NAME: its settings, spaces and score rule.

    A Benchmark whose family's optional extra is not installed is listed with the command that installs it.

    \b
    Examples:
      evoledger benchmarks
      evoledger benchmarks --family classic-control
      evoledger benchmarks --search lake
      evoledger benchmarks toy-text/frozen-lake
      evoledger benchmarks --json
    """
    if name is not None:
        _describe(name, as_json)
        return
    entries = _selected(family, search)
    rows = [_row(entry) for entry in entries]
    if as_json:
        echo_json(rows)
        return
    console = Console()
    if not rows:
        console.print(cell(f"no Benchmark matches (every family: {', '.join(default_registry().families())})"))
        return
    table = Table(title="Benchmarks (evoledger benchmarks NAME describes one)")
    name_width, family_width = max(len(r["name"]) for r in rows), max(len(r["family"]) for r in rows)
    # one line a row: the summary gets what the terminal leaves (3 = a column's border and padding); in a narrow
    # terminal the family column goes first (every name starts with its family)
    room = console.width - 1 - (name_width + 3) - (len("installed") + 3) - 3
    show_family = room - (family_width + 3) >= 24
    room = max(8, room - (family_width + 3 if show_family else 0))
    table.add_column("name", no_wrap=True, min_width=name_width)
    if show_family:
        table.add_column("family", no_wrap=True, min_width=family_width)
    table.add_column("installed", no_wrap=True, min_width=len("installed"))
    table.add_column("summary", no_wrap=True)
    missing: dict[str, tuple[str, int]] = {}
    for r in rows:
        aliases = f" (alias: {', '.join(r['aliases'])})" if r["aliases"] else ""
        summary = r["summary"] + aliases
        summary = summary if len(summary) <= room else summary[: room - 1] + "…"
        family_cell = [cell(r["family"])] if show_family else []
        table.add_row(cell(r["name"]), *family_cell, "yes" if r["installed"] else "no", cell(summary))
        if not r["installed"]:
            command, count = missing.get(r["extra"], (r["install_command"], 0))
            missing[r["extra"]] = (command, count + 1)
    console.print(table)
    for extra, (command, count) in sorted(missing.items()):
        console.print(cell(f"not installed: {count} Benchmarks need the extra {extra!r}: {command}"))
