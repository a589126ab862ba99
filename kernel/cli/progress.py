"""Progress where work is long, in a terminal only; ``-q`` / ``-v`` on every command.

A progress bar is drawn (rich, on stderr) only when stderr is a terminal and neither ``--json`` nor ``-q`` was
given, so logs and pipes never fill with redraws. ``-q`` also drops the header lines (run directory, seed,
isolation); ``-v`` prints each step of long work (each Submission, each Episode) as a line, terminal or not.

The bars count real work with a total known when it starts: the budget of a Run, then its Validation and
Assessment Episodes, the Episodes ``replay --execute`` re-runs and the rows ``export``
writes (each a ``counter``). The library layers report through plain callbacks (``on_judged``, ``on_episode``,
``on_progress``) and never import rich or click. Whether stderr is a terminal is rich's decision
(``Console.is_terminal``): ``FORCE_COLOR=1`` (or, with rich >= 14, ``TTY_COMPATIBLE=1``) draws the bars where
stderr is not a terminal (a CI log), and ``TTY_COMPATIBLE=0`` never draws them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, TypeVar

import click

if TYPE_CHECKING:
    from evoledger.projections.run_state import RunState
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn, Task, TaskID

__all__ = [
    "bar",
    "counter",
    "judging_text",
    "note",
    "run_watcher",
    "spinner",
    "step",
    "verbosity",
    "verbosity_options",
]

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


def _count_column() -> ProgressColumn:
    """done/total, or nothing while the total is unknown (rather than ``0/?``)."""
    from rich.progress import MofNCompleteColumn
    from rich.text import Text

    class _Count(MofNCompleteColumn):
        def render(self, task: Task) -> Text:
            return Text("") if task.total is None else super().render(task)

    return _Count()


def bar(console: Console, *, as_json: bool, info: str = "info") -> Progress:
    """A progress bar (description, bar, done/total, ``task.fields[info]``, elapsed); disabled unless drawn."""
    # rich only now: a command module that imports the options stays light (evaluate starts its workers first)
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        _count_column(),
        TextColumn(f"{{task.fields[{info}]}}"),
        TimeElapsedColumn(),
        console=console,
        disable=not _drawn(console, as_json),
    )


def spinner(console: Console, what: str, *, as_json: bool) -> Progress:
    """A spinner with elapsed time for work of unknown length (``replay`` without ``--execute``)."""
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


def counter(
    progress: Progress,
    console: Console,
    *,
    units: Mapping[str, str] | None = None,
    replaces: TaskID | None = None,
) -> Callable[[str, int, int], None] | None:
    """An ``on_progress(what, done, total)``: one bar per ``what``, counting in ``units[what]`` (else Episodes).

    A Run's ``on_judged`` (``what``: validation, assessment) and ``export``'s ``on_progress`` (``what``: a config).
    ``None`` when nothing would be shown (no bar drawn, no ``-v``), so the work is not even counted.

    ``replaces``: a task of unknown length (e.g. "auditing") removed when the first count arrives. With ``-v`` a
    line is printed as each ``what`` completes.
    """
    if progress.disable and verbosity() <= 0:
        return None
    tasks: dict[str, TaskID] = {}
    waiting = [replaces] if replaces is not None else []

    def update(what: str, done: int, total: int) -> None:
        while waiting:
            progress.remove_task(waiting.pop())
        task = tasks.get(what)
        if task is None:
            unit = (units or {}).get(what, "Episodes")
            task = tasks[what] = progress.add_task(what, total=total, completed=done, info=unit)
        else:
            progress.update(task, total=total, completed=done)
        if done == total:
            step(console, f"{what}: {done}/{total} {(units or {}).get(what, 'Episodes')}")

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
