"""The root ``evoledger`` command group: commands loaded on demand, and the error-to-exit-code mapping.

Each command lives in its own module, named in :data:`COMMANDS`; ``evoledger COMMAND`` imports only that
module (so ``evoledger ledger verify`` never pays for gymnasium), and ``evoledger --help`` imports none: it
lists each command with the first sentence of its docstring, read from the module's source.

Ctrl-C and SIGTERM end every command the same clean way: :class:`KeyboardInterrupt` (SIGTERM raises its subclass
:class:`Terminated`) unwinds the command, which stops its Agent and workers and closes its record on the way; then
Ctrl-C exits 130 and SIGTERM ends the process by SIGTERM, as its sender expects.
"""

from __future__ import annotations

import ast
import gc
import importlib
import importlib.util
import os
import signal
import sys
from types import FrameType
from typing import Any, Final, NoReturn

import click
from evoledger import __version__
from evoledger.ledger.errors import EvoLedgerError

__all__ = ["COMMANDS", "INTERRUPTED", "Terminated", "cli", "main"]

INTERRUPTED: Final = 130
"""The exit code after Ctrl-C (SIGINT), as a shell reports a process that SIGINT ended."""

COMMANDS: Final = {
    "run": "evoledger.kernel.cli.run_command:run_command",
    "resume": "evoledger.kernel.cli.resume_command:resume_command",
    "replay": "evoledger.kernel.cli.replay_command:replay_command",
    "report": "evoledger.kernel.cli.report_command:report_command",
    "sweep": "evoledger.kernel.cli.sweep_command:sweep_command",
    "evaluate": "evoledger.kernel.cli.evaluate_command:evaluate_command",
    "export": "evoledger.kernel.cli.export_command:export_command",
    "ledger": "evoledger.kernel.cli.ledger_commands:ledger_group",
    "keys": "evoledger.kernel.cli.keys_command:keys_group",
    "bundle": "evoledger.kernel.cli.bundle_command:bundle_command",
    "unbundle": "evoledger.kernel.cli.bundle_command:unbundle_command",
    "benchmarks": "evoledger.kernel.cli.benchmarks_command:benchmarks_command",
    "agents": "evoledger.kernel.cli.agents_command:agents_command",
    "env": "evoledger.kernel.cli.env_command:env_group",
}
"""Every ``evoledger`` command: its name and the ``module:attribute`` of its click command, imported when invoked."""


def _source_docstring(target: str) -> str | None:
    """The docstring of the function ``module:attribute`` as written in its source, without importing it."""
    module, _, attribute = target.partition(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as source:
            tree = ast.parse(source.read(), filename=spec.origin)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attribute and node.decorator_list:
            return ast.get_docstring(node)
    return None


class _Group(click.Group):
    """The root group: loads commands from :data:`COMMANDS` on demand; turns :class:`EvoLedgerError` into exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _, attribute = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{COMMANDS[cmd_name]} is not a click command")
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their one-line help, as click writes them, importing no command that is not loaded."""
        listed: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                help_text = _source_docstring(COMMANDS[name])
                command = click.Command(name, help=help_text) if help_text is not None else self.get_command(ctx, name)
            if command is not None and not command.hidden:
                listed.append((name, command))
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in listed])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvoLedgerError as exc:
            from evoledger.kernel.cli.terminal_text import printable  # imports rich: only on this path

            click.echo(f"error: {printable(exc)}", err=True)  # messages quote recorded text
            sys.exit(exc.exit_code)
        except KeyboardInterrupt as exc:  # the command has unwound (run and resume said how to continue)
            _end_interrupted(exc)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that the command unwinds as on Ctrl-C (its Agent stopped too)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated


def _end_interrupted(exc: KeyboardInterrupt) -> NoReturn:
    if isinstance(exc, Terminated):
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # ended by SIGTERM, as it would have been without the unwinding
        sys.exit(128 + signal.SIGTERM)  # only if SIGTERM is blocked
    click.echo("interrupted", err=True)
    sys.exit(INTERRUPTED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evoledger")
def cli() -> None:
    """evoledger: evolve executable policies under an auditable, event-sourced run ledger.

    \b
    Example:
      evoledger --help
    """


def main() -> None:
    """Console-script entry point."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # a handler or SIG_IGN the caller chose stays
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        cli(prog_name="evoledger")
    finally:
        # The process ends here: spare its last garbage collection a walk over every module and class loaded (tens
        # of ms for a command that loaded pydantic, numpy and gymnasium). Whatever is left is freed by the exit.
        gc.freeze()
