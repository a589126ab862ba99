"""``evoledger resume``: continue a Run whose Host process died."""

from __future__ import annotations

from pathlib import Path

import click
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.run_command import print_summary
from evoledger.kernel.run.resume import resume
from rich.console import Console

__all__ = ["resume_command"]


@click.command("resume")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@signing_key_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def resume_command(run_dir: Path, signing_key: Path | None, as_json: bool) -> None:
    """Continue the Run in RUN_DIR after its Host died (kill -9, power loss): from the ledger alone.

    Work in flight is completed without charging budget twice, the Agent is restarted if it had not
    finished, and judging continues where it stopped. A Run that already ended is only summarized.
    A signed Run is signed again with the key it names (--signing-key, default: yours); another key is refused.

    \b
    Example:
      evoledger resume runs/cartpole-0
      evoledger resume runs/cartpole-0 --signing-key ~/keys/lab.pem
    """
    result = resume(run_dir, signing_key=resolve_signing_key(signing_key))
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        print_summary(result, Console())
