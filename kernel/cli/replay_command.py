"""``evoledger replay``: audit a recorded Run end to end and say which check failed first, and why."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click
from evoledger.kernel.cli.options import echo_json, isolation_choice
from evoledger.kernel.cli.progress import bar, counter, note, spinner, verbosity_options
from evoledger.kernel.cli.recorded_isolation import NO_ISOLATION_HELP, RECORDED_ISOLATION_HELP, recorded_code_isolation
from evoledger.kernel.cli.run_summary import print_summary
from evoledger.kernel.cli.terminal_text import cell, markup
from evoledger.kernel.replay import CheckResult, ReplayReport, replay
from evoledger.ledger.signing_keys import parse_trusted_key
from rich.console import Console
from rich.table import Table

__all__ = ["print_report", "replay_command"]

_VERDICT = {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]", "skipped": "[dim]skipped[/dim]"}
_SHOWN = 20


def _findings_table(check: CheckResult) -> Table:
    table = Table("severity", "code", "where", "what it means", title=f"{check.name}: findings")
    for f in check.findings[:_SHOWN]:
        table.add_row(cell(f.severity), cell(f.code), cell(f.where), cell(f.message))
    more = len(check.findings) - _SHOWN + check.findings_omitted
    if more > 0:
        table.add_row("", "", "", f"... and {more} more (use --json for all)")
    return table


def print_report(report: ReplayReport, console: Console) -> None:
    """The human rendering: one row per check, the findings of failed checks, then the verdict."""
    if report.rebuilt is not None:
        done = report.rebuilt
        if "error" in done:
            console.print(f"[red]--rebuild failed[/red]: {markup(done['error'])}")
        else:
            console.print(
                f"rebuilt {markup(done['target'])}: {done['written']} files written, {done['deleted']} deleted, "
                f"{done['unchanged']} already correct"
            )
            for odd in done.get("garbage", []):
                console.print(f"[yellow]removed Agent-owned garbage[/yellow]: {markup(odd)}", highlight=False)
        if "warning" in done:
            console.print(f"[yellow]warning[/yellow]: {markup(done['warning'])}")
    table = Table("check", "verdict", "seconds", "summary", title=cell(f"evoledger replay {report.run_dir}"))
    for check in report.checks:
        table.add_row(check.name, _VERDICT[check.status], f"{check.seconds:.2f}", cell(check.summary))
    console.print(table)
    for check in report.checks:
        if check.status == "fail":
            console.print(_findings_table(check))
        else:
            for f in [f for f in check.findings if f.severity != "error"][:_SHOWN]:
                console.print(f"[dim]{markup(f.severity)} ({check.name}): {markup(f.message)}[/dim]")
    if report.signature is not None:
        console.print(
            f"signature {markup(str(report.signature['status']))}: {markup(str(report.signature['message']))}"
        )
    failure = report.first_failure
    if failure is None:
        console.print("[green]ok[/green]: every check passed")
    else:
        name, finding = failure
        where = f" at {markup(finding.where)}" if finding.where else ""
        console.print(
            f"[red]FAILED[/red]: first failure in {name}{where} ({markup(finding.code)}): {markup(finding.message)}"
        )


@click.command("replay")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--execute", is_flag=True, help="Also re-run every recorded Episode and compare trajectory digests.")
@click.option("--rebuild", is_flag=True, help="Regenerate workspace/feedback/ from the log before checking.")
@click.option(
    "--isolation",
    type=isolation_choice(),
    default=None,
    help="With --execute: " + RECORDED_ISOLATION_HELP,
)
@click.option("--no-isolation", is_flag=True, help="With --execute: " + NO_ISOLATION_HELP)
@click.option(
    "--trusted-key",
    metavar="KEY|FINGERPRINT",
    default=None,
    help="The Run must be signed by this key: a public key file, its text form or a fingerprint (see 'ledger verify').",
)
@click.option(
    "--trust-recorded-benchmark",
    is_flag=True,
    help="Let replay import a Benchmark the record names by import string ('pkg.module:factory'): that runs "
    "code named by whoever wrote the record. Without it such a record is audited without importing anything, "
    "and --execute refuses it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@verbosity_options
def replay_command(
    run_dir: Path,
    execute: bool,
    rebuild: bool,
    isolation: str | None,
    no_isolation: bool,
    trusted_key: str | None,
    trust_recorded_benchmark: bool,
    as_json: bool,
) -> None:
    """Audit a Run: integrity, protocol, projections (and execution). Exit 0 only if every check passes.

    \b
    Checks:
      integrity    hash chain, head manifest, every referenced Object (or its recorded eviction), signature
      protocol     budget, limits, finish, Candidates, Validation, selection, Assessment, visibility
      projections  run state, the Agent mirror (workspace/feedback/) and retention, rebuilt from the log
      execution    (--execute) every Episode re-run from its Program snapshot and Host seeds
    Exit codes: 0 all checks pass, 3 a check failed (or the record is unreadable),
    2 --execute of a record naming its Benchmark by import string without --trust-recorded-benchmark.

    \b
    A run directory is untrusted input: a Benchmark is looked up only among the installed ones by
    name. A record whose Benchmark is an import string ('tests.bench:make') is only imported when
    you pass --trust-recorded-benchmark (do so only for Runs you or someone you trust recorded).

    \b
    Examples:
      evoledger replay runs/cartpole-0
      evoledger replay runs/cartpole-0 --execute --json
      evoledger replay runs/cartpole-0 --rebuild
      evoledger replay runs/cartpole-0 --trusted-key ed25519:3f1c0e4b9a7d2e6f8a0b1c2d3e4f5a6b
      evoledger replay runs/my-bench-0 --execute --trust-recorded-benchmark
    """
    trusted = None if trusted_key is None else parse_trusted_key(trusted_key)
    if execute:  # ConfigError (exit 2, with the install hint) where no sandbox can run and none was waived
        chosen = recorded_code_isolation(isolation, no_isolation, command="replay --execute")
        if not as_json:
            note(Console(stderr=True), f"isolation: {chosen.describe()}")
        isolation = chosen.isolation
    console = Console(stderr=True)
    on_episode = None
    if execute:  # checks 1-3 (of unknown length), then a bar of the Episodes re-run
        progress = bar(console, as_json=as_json)
        auditing = progress.add_task("auditing", total=None, info="")
        rerun = counter(progress, console, replaces=auditing)
        on_episode = None if rerun is None else partial(rerun, "re-running")
    else:
        progress = spinner(console, "auditing", as_json=as_json)
    with progress:
        report = replay(
            run_dir,
            execute=execute,
            rebuild=rebuild,
            isolation=isolation or "auto",
            trusted_key=trusted,
            trust_benchmark=trust_recorded_benchmark,
            on_episode=on_episode,
        )
    if as_json:
        echo_json(report.to_dict())
    else:
        if report.run_result is not None:  # the Run as its log tells it, then the audit's verdict
            print_summary(report.run_result, Console(), audit_hint=False)
        print_report(report, Console())
    if not report.ok:
        raise SystemExit(report.exit_code)
