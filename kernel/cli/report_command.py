"""``evoledger report``: one self-contained HTML report of one or several Runs, built from their ledgers."""

from __future__ import annotations

from pathlib import Path

import click
from evoledger.kernel.cli.options import echo_json, isolation_choice
from evoledger.kernel.cli.progress import spinner, verbosity_options
from evoledger.kernel.cli.recorded_isolation import NO_ISOLATION_HELP, RECORDED_ISOLATION_HELP, recorded_code_isolation
from evoledger.kernel.cli.run_report import RenderedFigure, rendered_episodes, report_html, write_html
from evoledger.kernel.cli.terminal_text import markup
from evoledger.kernel.sweep.record import runs_of
from evoledger.ledger.errors import InputError
from rich.console import Console

__all__ = ["report_command"]


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN [RUN...]")
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="The HTML file to write (missing parent folders are created).",
)
@click.option("--no-audit", is_flag=True, help="Leave out each Run's replay verdict (the log-only audit).")
@click.option(
    "--render-episodes",
    type=click.IntRange(0, 20),
    default=0,
    show_default=True,
    metavar="N",
    help="Also re-execute N Episodes of each Run (its selected Candidate's best and worst public Episodes) and embed "
    "them drawn, each checked against its recorded trajectory digest as 'replay --render' does.",
)
@click.option(
    "--isolation", type=isolation_choice(), default=None, help="With --render-episodes: " + RECORDED_ISOLATION_HELP
)
@click.option("--no-isolation", is_flag=True, help="With --render-episodes: " + NO_ISOLATION_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@verbosity_options
def report_command(
    run_dirs: tuple[Path, ...],
    out: Path,
    no_audit: bool,
    render_episodes: int,
    isolation: str | None,
    no_isolation: bool,
    as_json: bool,
) -> None:
    """Write one HTML report of one or several Runs: learning curves, Submissions, returns, failures, a comparison.

    The page is self-contained (styles and charts inline, no script, no network request) and built only from the
    ledgers, so it can be rebuilt at any time. Each Run's facts include its 'evoledger replay' verdict (the
    log-only audit; --no-audit leaves it out). Several Runs add a comparison: their curves overlaid and a
    leaderboard by Agent x Benchmark with the mean Assessment score and a 95% Student-t interval over the Runs.
    A sweep's folder (evoledger sweep ... --out DIR) stands for every Run it holds.

    \b
    Examples:
      evoledger report runs/cartpole
      evoledger report runs/cartpole-1 runs/cartpole-2 runs/cartpole-3 --out reports/cartpole.html
      evoledger report runs/cartpole --render-episodes 2   # and two of its Episodes drawn (a GIF each)
      evoledger report sweeps/study --out study.html       # every Run of a sweep: the leaderboard across it
    """
    if out.is_dir():  # refused before any Run is read
        raise InputError(f"--out {out} is a folder; name the HTML file to write, e.g. --out {out / 'report.html'}")
    if (isolation is not None or no_isolation) and not render_episodes:
        raise InputError("--isolation and --no-isolation choose how --render-episodes re-executes; pass it too")
    run_dirs = tuple(runs_of(run_dirs))  # a sweep's folder: its Runs
    renders: list[RenderedFigure] = []
    if render_episodes:
        chosen = recorded_code_isolation(isolation, no_isolation, command="report --render-episodes")
        with spinner(Console(stderr=True), "re-executing Episodes to draw", as_json=as_json):
            renders = rendered_episodes(run_dirs, render_episodes, isolation=chosen.isolation)
    with spinner(Console(stderr=True), "building the report", as_json=as_json):
        html = report_html(list(run_dirs), audit=not no_audit, renders=renders)
    write_html(out, html)
    if as_json:
        written = {"out": str(out), "runs": [str(d) for d in run_dirs], "bytes": len(html.encode("utf-8"))}
        echo_json({**written, "rendered": [figure.title for figure in renders]})
    else:
        Console().print(
            f"wrote {markup(out)} ({len(run_dirs)} Run{'s' if len(run_dirs) != 1 else ''})",
            highlight=False,
            soft_wrap=True,  # a path is never broken across lines
        )
