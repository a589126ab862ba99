"""Each sweep cell's command line: ``evoledger run`` for a new Run, ``evoledger resume`` for a crashed one.

A cell's process is the ``evoledger`` command itself, with every setting passed as the flag ``evoledger run`` takes
for it, generated from the same ``RUN_OPTIONS`` that define those flags: whatever a Run can be told on the command
line, a sweep file can tell it, and a Run started by a sweep is exactly the Run that command line would start (its
Benchmark's own default limits, its report, its exit code, its clean stop on ``SIGTERM``). ``extra`` is appended to
both commands: a flag the sweep passes through to every Run's Episodes (such as an execution backend).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.cli.agent_options import AGENT_OPTION_FIELDS
from evoledger.kernel.cli.config_options import ConfigOption
from evoledger.kernel.cli.run_command import RUN_OPTIONS
from evoledger.kernel.registry import is_import_string
from evoledger.ledger.events import SweepCell

__all__ = ["resume_argv", "run_argv", "run_values"]

_OPTION_KEYS: Final = {field.partition(".")[2] for field in AGENT_OPTION_FIELDS}
"""The Agent options with no flag of their own: passed as ``--agent-option KEY=VALUE``."""


def _evoledger() -> list[str]:
    return [sys.executable, "-m", "evoledger"]


def run_values(cell: SweepCell, workers: int | None) -> dict[str, Any]:
    """The cell's ``RunConfig`` values as ``evoledger run``'s options see them (``workers``: unless the file says)."""
    values: dict[str, Any] = {**cell.run, "seed": cell.seed}
    if workers is not None and "workers" not in values:
        values["workers"] = workers
    agent = {key: value for key, value in cell.agent_options.items() if key not in _OPTION_KEYS}
    values["agent"] = {"name": cell.agent, **agent}
    return values


def _lookup(values: Mapping[str, Any], path: Sequence[str]) -> tuple[bool, Any]:
    node: Any = values
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _flag_words(option: ConfigOption, value: Any) -> list[str]:
    if isinstance(value, bool):
        name = option.flags[0].removeprefix("--")
        return [f"--{name}" if value else f"--no-{name}"]
    if isinstance(value, list | tuple):
        return [word for item in value for word in (option.flags[0], str(item))]
    return [option.flags[0], str(value)]


def run_argv(cell: SweepCell, run_dir: Path, workers: int | None, extra: Sequence[str] = ()) -> list[str]:
    """``evoledger run`` for ``cell``, recording to ``run_dir``, its result as JSON."""
    argv = [*_evoledger(), "run", cell.benchmark, "--record-to", str(run_dir), "--json", "-q"]
    for key, value in cell.settings.items():
        argv += ["--set", f"{key}={json.dumps(value)}"]
    values = run_values(cell, workers)
    for option in RUN_OPTIONS:
        found, value = _lookup(values, option.path)
        if found and value is not None:
            argv += _flag_words(option, value)
    for key, value in cell.agent_options.items():
        if key in _OPTION_KEYS:
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            argv += ["--agent-option", f"{key}={text}"]
    return [*argv, *extra]


def resume_argv(cell: SweepCell, run_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    """``evoledger resume`` of ``cell``'s Run, with the isolation its sweep file chose (default ``auto``: bubblewrap
    where it works) and its Agent re-stated, since the sweep file vouches for both."""
    argv = [*_evoledger(), "resume", str(run_dir), "--json", "-q"]
    argv += ["--isolation", str(cell.run.get("isolation", "auto"))]
    argv += ["--agent-isolation", str(cell.run.get("agent_isolation", "auto"))]
    argv += ["--agent", cell.agent]
    if is_import_string(cell.benchmark):
        argv.append("--trust-recorded-benchmark")
    return [*argv, *extra]
