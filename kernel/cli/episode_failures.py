"""``evaluate``'s verdict when every Episode failed: the failures grouped, the first traceback, a non-zero exit."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Final

from evoledger.kernel.evaluation import EvaluationResult

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ALL_EPISODES_FAILED", "EVALUATE_EXIT_CODES_HELP", "exit_if_all_failed", "program_traceback"]

ALL_EPISODES_FAILED: Final = 6
"""The exit code of an evaluation in which no Episode ended ``ok``."""

EVALUATE_EXIT_CODES_HELP: Final = (
    "Exit codes: 0 at least one Episode ran to its end; 6 every Episode failed (the failures are grouped and the "
    "first one's traceback is printed with its file and line); 2 a wrong option or input; 5 an Environment or "
    "Host fault."
)

_MATERIALIZED: Final = re.compile(r'File "(?:/program/episode-\d+|[^"\n]*/evoledger-program-[^/"\n]+/program)/')
"""Where a Program runs: ``/program/episode-N`` inside bubblewrap, a temporary folder without it."""


def program_traceback(traceback: str, program_dir: Path) -> str:
    """``traceback`` with the Program's run-time folder replaced by ``program_dir``, the folder the user gave."""
    return _MATERIALIZED.sub(lambda _: f'File "{program_dir}/', traceback)


def exit_if_all_failed(result: EvaluationResult, program_dir: Path, console: Console) -> None:
    """Return when any Episode ended ``ok``; else print the grouped failures and the first traceback, and exit 6."""
    if not result.episodes or any(e.status == "ok" for e in result.episodes):
        return
    from evoledger.kernel.cli.terminal_text import printable  # imports rich: only on this path

    groups = Counter((e.status, e.failure or "") for e in result.episodes)
    console.print(f"error: all {len(result.episodes)} Episodes failed:", highlight=False, markup=False)
    for (status, failure), count in groups.most_common():
        first = next(e.index for e in result.episodes if (e.status, e.failure or "") == (status, failure))
        same = f"{count} Episodes" if count > 1 else "1 Episode"
        line = f"  {same} ({status}, first: Episode {first}): {printable(failure)}"
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    traced = next((e for e in result.episodes if e.traceback), None)
    if traced is not None and traced.traceback is not None:
        console.print(f"traceback of Episode {traced.index}:", highlight=False, markup=False)
        lines = program_traceback(traced.traceback, program_dir).rstrip("\n").splitlines()
        text = "\n".join(printable(line) for line in lines)
        console.print(text, highlight=False, markup=False, soft_wrap=True)
    raise SystemExit(ALL_EPISODES_FAILED)
