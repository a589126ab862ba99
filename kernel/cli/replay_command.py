"""``evoledger replay``: audit a recorded Run end to end and say which check failed first, and why."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click
from evoledger.kernel.cli.backend_options import backend_options, chosen_backend
from evoledger.kernel.cli.options import echo_json, isolation_choice
from evoledger.kernel.cli.progress import bar, counter, note, spinner, verbosity_options
from evoledger.kernel.cli.recorded_isolation import NO_ISOLATION_HELP, RECORDED_ISOLATION_HELP, recorded_code_isolation
from evoledger.kernel.cli.run_summary import print_summary
from evoledger.kernel.cli.terminal_text import cell, markup
from evoledger.kernel.execution import IsolationChoice
from evoledger.kernel.replay import CheckResult, ReplayReport, replay
from evoledger.kernel.replay.render import (
    DEFAULT_FPS,
    DEFAULT_MAX_FRAMES,
    DEFAULT_WIDTH,
    render_format,
    render_recorded_episode,
)
from evoledger.ledger.errors import ConfigError
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
@backend_options
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
@click.option(
    "--render",
    "render_episode",
    metavar="EPISODE",
    default=None,
    help="Instead of auditing, re-execute this recorded Episode and draw it to --out: SPLIT/SUBMISSION/INDEX "
    "(train/submission-000002/4), SUBMISSION/INDEX for a training Episode, or a trajectory digest prefix.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --render: the file to write; .gif or .mp4 (an animation), .png (a reward chart) or .txt (a text trace).",
)
@click.option(
    "--visibility",
    type=click.Choice(["public", "all"]),
    default="public",
    show_default=True,
    help="With --render: 'all' also allows host-only Validation and Assessment Episodes.",
)
@click.option(
    "--max-frames",
    type=int,
    default=DEFAULT_MAX_FRAMES,
    show_default=True,
    help="With --render: the most states drawn, evenly spread over the Episode (the first and last always).",
)
@click.option(
    "--width", type=int, default=DEFAULT_WIDTH, show_default=True, help="With --render: frame width in pixels."
)
@click.option(
    "--fps", type=int, default=DEFAULT_FPS, show_default=True, help="With --render: animation frames a second."
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@verbosity_options
def replay_command(
    run_dir: Path,
    execute: bool,
    rebuild: bool,
    isolation: str | None,
    no_isolation: bool,
    backend: str,
    ray_address: str | None,
    trusted_key: str | None,
    trust_recorded_benchmark: bool,
    render_episode: str | None,
    out: Path | None,
    visibility: str,
    max_frames: int,
    width: int,
    fps: int,
    as_json: bool,
) -> None:
    """Audit a Run: integrity, protocol, projections (and execution). Exit 0 only if every check passes.

    \b
    Checks:
      integrity    hash chain, head manifest, every referenced Object (or its recorded eviction), signature
      protocol     budget, limits, finish, Candidates, Validation, selection, Assessment, visibility
      projections  run state, the Agent mirror (workspace/feedback/) and retention, rebuilt from the log
      execution    (--execute) every Episode re-run from its Program snapshot and Host seeds
    With --render EPISODE --out FILE, replay instead re-executes that one Episode (as --execute does), checks it
    reproduces the recorded trajectory digest, and draws it: an animation with step, action and reward overlaid
    (.gif; .mp4 needs pip install 'evoledger[video]'), or for a Benchmark without a renderer a reward chart
    (.gif/.png); .txt writes a plain-text trace. Exit 3 when the Episode does not reproduce (nothing written).
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
      evoledger replay runs/cartpole-0 --render train/submission-000002/4 --out episode.gif
      evoledger replay runs/cartpole-0 --render assessment/submission-000003/0 --visibility all --out a.mp4
    """
    if (backend != "local" or ray_address is not None) and not execute:
        raise ConfigError(
            "--backend and --ray-address choose where --execute re-runs Episodes (--render runs its one Episode "
            "locally); pass --execute, or drop them"
        )
    if render_episode is not None:
        if execute or rebuild or trusted_key is not None:
            raise ConfigError("--render draws one Episode; run --execute, --rebuild or --trusted-key without it")
        if out is None:
            raise ConfigError("--render needs --out FILE (.gif, .mp4, .png or .txt)")
        render_format(out, None)  # a wrong suffix is refused before anything runs
        chosen = recorded_code_isolation(isolation, no_isolation, command="replay --render")
        _render(
            run_dir,
            render_episode,
            out,
            chosen,
            trust_recorded_benchmark,
            as_json,
            visibility=visibility,
            max_frames=max_frames,
            width=width,
            fps=fps,
        )
        return
    if out is not None:
        raise ConfigError("--out is the file of --render EPISODE; pass --render too, or drop --out")
    trusted = None if trusted_key is None else parse_trusted_key(trusted_key)
    where = chosen_backend(backend, ray_address) if execute else None
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
            backend=where,
        )
    if as_json:
        echo_json(report.to_dict())
    else:
        if report.run_result is not None:  # the Run as its log tells it, then the audit's verdict
            print_summary(report.run_result, Console(), audit_hint=False)
        print_report(report, Console())
    if not report.ok:
        raise SystemExit(report.exit_code)


def _render(
    run_dir: Path,
    episode: str,
    out: Path,
    chosen: IsolationChoice,
    trust_benchmark: bool,
    as_json: bool,
    **drawing: Any,
) -> None:
    console = Console(stderr=True)
    if not as_json:
        note(console, f"isolation: {chosen.describe()}")
    with spinner(console, f"re-executing {episode}", as_json=as_json):
        done = render_recorded_episode(
            run_dir, episode, out, isolation=chosen.isolation, trust_benchmark=trust_benchmark, **drawing
        )
    facts = {
        "out": str(out),
        "episode": done.episode,
        "media_type": done.media_type,
        "kind": done.kind,
        "frames": done.frames,
        "steps": done.steps,
        "episode_return": done.episode_return,
        "status": done.status,
        "trajectory_digest": done.trajectory_digest,
        "matches_recording": done.matches_recording,
        "bytes": len(done.data),
        "note": done.note,
    }
    if as_json:
        echo_json(facts)
        return
    what = {"animation": f"{done.frames} frames", "chart": "a reward chart", "text": "a text trace"}[done.kind]
    Console().print(
        f"wrote {markup(str(out))}: {what} of {markup(done.episode)} ({done.steps} steps, return "
        f"{done.episode_return:.6g}, {markup(done.status)}); re-executed trajectory {done.trajectory_digest} matches "
        "the record",
        highlight=False,
        soft_wrap=True,  # a path is never broken across lines
    )
    if done.note:
        Console().print(f"[yellow]note[/yellow]: {markup(done.note)}", highlight=False)
