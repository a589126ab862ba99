"""The root ``evoledger`` command group and the error-to-exit-code mapping."""

from __future__ import annotations

import sys
from typing import Any

import click
from evoledger import __version__
from evoledger.kernel.cli.terminal_text import printable
from evoledger.ledger.errors import EvoLedgerError

__all__ = ["cli", "main"]


class _Group(click.Group):
    """A click group that turns :class:`EvoLedgerError` into a one-line message and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EvoLedgerError as exc:
            click.echo(f"error: {printable(exc)}", err=True)  # messages quote recorded text
            sys.exit(exc.exit_code)


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
    cli(prog_name="evoledger")


def _register() -> None:
    from evoledger.kernel.cli.benchmarks_command import benchmarks_command
    from evoledger.kernel.cli.bundle_command import bundle_command, unbundle_command
    from evoledger.kernel.cli.evaluate_command import evaluate_command
    from evoledger.kernel.cli.export_command import export_command
    from evoledger.kernel.cli.keys_command import keys_group
    from evoledger.kernel.cli.ledger_commands import ledger_group
    from evoledger.kernel.cli.replay_command import replay_command
    from evoledger.kernel.cli.resume_command import resume_command
    from evoledger.kernel.cli.run_command import run_command

    for command in (
        run_command,
        resume_command,
        replay_command,
        evaluate_command,
        export_command,
        ledger_group,
        keys_group,
        bundle_command,
        unbundle_command,
        benchmarks_command,
    ):
        cli.add_command(command)


_register()
