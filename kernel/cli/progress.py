"""Progress where work is long, in a terminal only; ``-q`` / ``-v`` on every command.

A progress bar is drawn (rich, on stderr) only when stderr is a terminal and neither ``--json`` nor ``-q`` was
given, so logs and pipes never fill with redraws. ``-q`` also drops the header lines (run directory, seed,
isolation); ``-v`` prints each step of long work (each Submission, each Episode) as a line, terminal or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

import click

if TYPE_CHECKING:
    from evoledger.projections.run_state import RunState
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["bar", "judging_text", "note", "run_watcher", "spinner", "step", "verbosity", "verbosity_options"]

_F = TypeVar("_F", bound=Callable[..., object])
_QUIET: Final = "evoledger.quiet"
_VERBOSE: Final = "evoledger.verbose"


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> None:
    ctx.meta[_QUIET if param.name == "quiet" else _VERBOSE] = value


def verbosity_options(function: _F) -> _F:
    """Add ``-q/--quiet`` and ``-v/--verbose`` to a command (read back with :func:`verbosity`)."""
    quiet = click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=_remember,
        help="Print only results and errors: no progress bar, no header lines.",
    )
    verbose = click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_remember,
        help="Also print each step of long work (each Submission, each Episode) as a line.",
    )
    return quiet(verbose(function))


def verbosity() -> int:
    """-1 with ``-q``, the number of ``-v`` otherwise (0 by default, and outside a command)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return 0
    if ctx.meta.get(_QUIET):
        return -1
    return int(ctx.meta.get(_VERBOSE) or 0)


def note(console: Console, text: str) -> None:
    """A header line (run directory, isolation), unless ``-q``."""
    if verbosity() >= 0:
        console.print(text, highlight=False, soft_wrap=True)


def step(console: Console, text: str) -> None:
    """One step of long work, printed only with ``-v``."""
    if verbosity() > 0:
        console.print(text, highlight=False, soft_wrap=True, markup=False)


def _drawn(console: Console, as_json: bool) -> bool:
    return console.is_terminal and not as_json and verbosity() >= 0


def bar(console: Console, *, as_json: bool, info: str = "info") -> Progress:
    """A progress bar (description, bar, done/total, ``task.fields[info]``, elapsed); disabled unless drawn."""
    # rich only now: a command module that imports the options stays light (evaluate starts its workers first)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(f"{{task.fields[{info}]}}"),
        TimeElapsedColumn(),
        console=console,
        disable=not _drawn(console, as_json),
    )


def spinner(console: Console, what: str, *, as_json: bool) -> Progress:
    """A spinner with elapsed time for work of unknown length (``replay --execute``, ``export``)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not _drawn(console, as_json),
    )
    progress.add_task(what, total=None)
    return progress


def run_watcher(progress: Progress, console: Console, *, judging: str) -> Callable[[RunState], None]:
    """The ``on_update`` of a live Run: the budget bar, then the judging phase; with ``-v`` a line per Submission."""
    task = progress.add_task("budget", total=None, info="")
    printed: set[str] = set()
    judged = False

    def update(state: RunState) -> None:
        nonlocal judged
        latest = state.submissions[state.submission_order[-1]] if state.submission_order else None
        score = "" if latest is None or latest.score is None else f"latest score {latest.score:.2f}"
        used = state.charged - state.refunded
        progress.update(task, total=state.episode_budget, completed=used, info=f"{state.submissions_used} subs {score}")
        for sid in state.submission_order:
            view = state.submissions[sid]
            if sid not in printed and view.score is not None:
                printed.add(sid)
                failures = f", {view.policy_failures} Policy failures" if view.policy_failures else ""
                step(console, f"{sid}: {len(view.episodes)} Episodes, public score {view.score:.3f}{failures}")
        if state.finished and not judged:
            judged = True
            progress.update(task, description="judging", info=judging)
            step(console, f"finish accepted; {judging}")

    return update


def judging_text(validation_episodes: int, max_candidates: int, assessment_episodes: int) -> str:
    """What happens after ``finish``, in a few words (the Run's Validation and Assessment settings)."""
    validating = (
        f"validating up to {max_candidates} Candidates on {validation_episodes} Episodes each"
        if validation_episodes
        else "no Validation"
    )
    assessing = f"assessing the selected one on {assessment_episodes}" if assessment_episodes else "no Assessment"
    return f"{validating}, then {assessing}"
