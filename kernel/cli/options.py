"""Option parsing shared by several commands (benchmark config pairs, JSON output)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click
from evoledger.kernel.execution import ISOLATIONS
from evoledger.ledger.errors import ConfigError

__all__ = ["echo_json", "isolation_choice", "parse_config_pairs"]


def isolation_choice() -> click.Choice[str]:
    """The ``--isolation`` values."""
    return click.Choice(list(ISOLATIONS))


def parse_config_pairs(pairs: Sequence[str]) -> dict[str, Any]:
    """Turn ``("map_name=8x8", "is_slippery=false")`` into ``{"map_name": "8x8", "is_slippery": False}``.

    Values are parsed as JSON when they are valid JSON, else taken as strings.
    """
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"benchmark option {pair!r} must look like KEY=VALUE, e.g. map_name=8x8")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        config[key.strip()] = value
    return config


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
