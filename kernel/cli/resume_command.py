"""``evoledger resume``: continue a Run whose Host process died."""

from __future__ import annotations

from pathlib import Path

import click
from evoledger.kernel.agents.sandbox import resolve_agent_isolation
from evoledger.kernel.cli.agent_isolation import agent_isolation_option
from evoledger.kernel.cli.backend_options import backend_options, chosen_backend
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import echo_json, isolation_choice
from evoledger.kernel.cli.progress import bar, counter, note, run_watcher, verbosity_options
from evoledger.kernel.cli.recorded_isolation import NO_ISOLATION_HELP, RECORDED_ISOLATION_HELP, recorded_code_isolation
from evoledger.kernel.cli.run_outcome import EXIT_CODES_HELP, exit_for_run, resume_hint_on_interrupt
from evoledger.kernel.cli.run_report import leave_host_report
from evoledger.kernel.cli.run_summary import print_summary
from evoledger.kernel.cli.terminal_text import markup
from evoledger.kernel.run.resume import resume
from rich.console import Console

__all__ = ["resume_command"]


@click.command("resume", epilog=EXIT_CODES_HELP)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--isolation",
    type=isolation_choice(),
    default=None,
    help=RECORDED_ISOLATION_HELP,
)
@click.option("--no-isolation", is_flag=True, help=NO_ISOLATION_HELP)
@backend_options
@agent_isolation_option
@signing_key_option
@click.option(
    "--trust-recorded-benchmark",
    is_flag=True,
    help="Import a Benchmark the record names by import string ('pkg.module:factory'): runs code the record names.",
)
@click.option(
    "--trust-recorded-agent",
    is_flag=True,
    help="Run the Agent the record names when it is a 'command:...' or an import string.",
)
@click.option("--agent", default=None, help="Re-state the recorded Agent (must equal it exactly); vouches for it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@verbosity_options
def resume_command(
    run_dir: Path,
    isolation: str | None,
    no_isolation: bool,
    backend: str,
    ray_address: str | None,
    agent_isolation: str,
    signing_key: Path | None,
    trust_recorded_benchmark: bool,
    trust_recorded_agent: bool,
    agent: str | None,
    as_json: bool,
) -> None:
    """Continue the Run in RUN_DIR after its Host died (kill -9, power loss): from the ledger alone.

    Work in flight is completed without charging budget twice, the Agent is restarted if it had not
    finished, and judging continues where it stopped. A Run that already ended is only summarized.
    A signed Run is signed again with the key it names (--signing-key, default: yours); another key is refused.

    A run directory is untrusted input: resume refuses (exit 2) a record whose Benchmark is an import
    string or whose Agent is a 'command:...' (or an import string) unless you vouch for it.

    \b
    Examples:
      evoledger resume runs/cartpole-0
      evoledger resume runs/cartpole-0 --signing-key ~/keys/lab.pem
      evoledger resume runs/my-bench-0 --trust-recorded-benchmark
      evoledger resume runs/scripted-0 --agent 'command:python3 my_agent.py'
      evoledger resume runs/scripted-0 --trust-recorded-agent
    """
    chosen = recorded_code_isolation(isolation, no_isolation, command="resume")  # never the recorded choice
    agent_chosen = resolve_agent_isolation(agent_isolation)  # never the recorded choice either
    where = chosen_backend(backend, ray_address)  # not recorded: either backend continues any Run
    console = Console(stderr=True)
    if not as_json:
        note(console, f"isolation: {chosen.describe()}")
        note(console, f"agent isolation: {agent_chosen.describe()}")
    with bar(console, as_json=as_json) as progress, resume_hint_on_interrupt(run_dir, console):
        result = resume(
            run_dir,
            isolation=chosen.isolation,
            agent_isolation=agent_chosen.isolation,
            signing_key=resolve_signing_key(signing_key),
            trust_benchmark=trust_recorded_benchmark,
            trust_agent=trust_recorded_agent,
            agent=agent,
            on_update=run_watcher(progress, console, judging="validating and assessing the Candidates"),
            on_judged=counter(progress, console),
            backend=where,
        )
    report = leave_host_report(result.run_dir, console)
    if as_json:
        echo_json({**result.model_dump(mode="json"), "report_html": None if report is None else str(report)})
    else:
        print_summary(result, Console())
        if report is not None:
            Console().print(f"report: {markup(report)}", highlight=False, soft_wrap=True)
    exit_for_run(result.run_dir, result.reason, result.selected, Console(stderr=True))
