"""``evoledger agents [NAME]``: every Agent adapter, whether its program is installed, its version, how to log in.

The program is the first word of the command the adapter would launch (``--agent-option executable=PATH`` names
another one, for the one Agent named). Its version is what ``PROGRAM --version`` prints first, asked with a short
timeout in a process group of its own that is ended if it does not answer, so a CLI that waits for a login prompt
or the network never hangs the listing. Nothing else is run and nothing is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import click
from evoledger.kernel.agents.base import AgentTask, CodingAgent
from evoledger.kernel.agents.registry import agent_names, make_agent
from evoledger.kernel.cli.agent_options import agent_option_flag, apply_agent_options
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.terminal_text import cell
from evoledger.ledger.errors import UnknownNameError
from rich.console import Console
from rich.table import Table

__all__ = ["VERSION_TIMEOUT_SECONDS", "agents_command", "probe_version"]

VERSION_TIMEOUT_SECONDS: Final = 5.0
"""How long ``PROGRAM --version`` may take before it is ended and the version reported unknown."""

_VERSION_CHARS: Final = 80
_BUILTIN_AUTH: Final = "none: offline, no API key"


def _program(agent: CodingAgent) -> str:
    here = Path.cwd()  # nothing is written there: the command is only built, never run
    probe = AgentTask(task_text="# probe", workspace=here, task_file=here / "task.md")
    return agent.command(probe).argv[0]


def _locate(program: str) -> str | None:
    if "/" in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program)


def probe_version(path: str, timeout: float | None = None) -> str | None:
    """The first line ``path --version`` prints, or ``None`` when it fails, prints nothing or takes over ``timeout``
    seconds (default :data:`VERSION_TIMEOUT_SECONDS`); then its whole process group is ended."""
    timeout = VERSION_TIMEOUT_SECONDS if timeout is None else timeout
    try:
        proc = subprocess.Popen(
            [path, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    lines = [line.strip() for line in out.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return lines[0][:_VERSION_CHARS] if lines else None


def _row(name: str, options: dict[str, Any]) -> dict[str, Any]:
    agent = make_agent(name, options)
    program = _program(agent)
    found = _locate(program)
    builtin = getattr(agent, "module", None) is not None
    auth = _BUILTIN_AUTH if builtin else getattr(agent, "auth", "see the Agent's own documentation")
    return {
        "name": name,
        "kind": "built-in" if builtin else "cli",
        "program": program,
        "found": found,
        "version": None,
        "authenticate": auth,
        "transcript": getattr(agent, "transcript", None),
    }


@click.command("agents")
@click.argument("name", required=False)
@agent_option_flag
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
def agents_command(name: str | None, agent_options: tuple[str, ...], as_json: bool) -> None:
    """List the Agents: whether each program is installed, its version, and how to authenticate.

    \b
    Examples:
      evoledger agents
      evoledger agents codex --agent-option executable=/opt/codex/bin/codex --json
    """
    if name is not None and name not in agent_names():
        raise UnknownNameError("agent", name, agent_names())
    if agent_options and name is None:
        raise click.UsageError("--agent-option applies to one Agent: name it, e.g. evoledger agents codex ...")
    options = apply_agent_options({}, agent_options)
    adapter_options = {k: v for k, v in options.items() if k in ("effort", "executable", "view_image", "home")}
    rows = [_row(n, adapter_options if n == name else {}) for n in ([name] if name else agent_names())]
    with ThreadPoolExecutor(max_workers=max(1, len(rows))) as pool:
        versions = list(pool.map(lambda row: probe_version(row["found"]) if row["found"] else None, rows))
    for row, version in zip(rows, versions, strict=True):
        row["version"] = version
    if as_json:
        echo_json(rows)
        return
    table = Table("Agent", "Program", "Installed", "Version", "Authenticate")
    for row in rows:
        program = "python (built in)" if row["kind"] == "built-in" else row["found"] or row["program"]
        table.add_row(
            cell(row["name"]),
            cell(program),
            "yes" if row["found"] else "[red]not found[/red]",
            cell(row["version"] or "-"),
            cell(row["authenticate"]),
        )
    Console().print(table)
