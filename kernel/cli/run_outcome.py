"""The exit code of ``run`` and ``resume``: 0 only for a Run that finished with a selected Candidate.

A Run that ended any other way (the Agent failed, timed out, exited without finishing, spent the budget without
finishing; Validation or Assessment could not run; nothing was selected) is reported on stderr with its reason in
plain words and the last lines of the Agent's log (``host/agent-N/stderr.log`` and ``stdout.log``), and the
command exits :data:`RUN_NOT_FINISHED`. The log is read from a run directory that may come from someone else:
never through a link, and only its last bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from evoledger.kernel.cli.main import INTERRUPTED, Terminated
from evoledger.kernel.cli.terminal_text import printable
from evoledger.ledger.errors import EvoLedgerError
from evoledger.ledger.run_files import open_dir_at, open_file_at, open_root
from rich.console import Console

__all__ = [
    "EXIT_CODES_HELP",
    "INTERRUPTED",
    "RUN_NOT_FINISHED",
    "agent_log_tail",
    "exit_for_run",
    "resume_hint_on_interrupt",
]

RUN_NOT_FINISHED: Final = 6
"""The exit code of a Run that did not finish with a selected Candidate."""

EXIT_CODES_HELP: Final = (
    "Exit codes: 0 the Run finished with a selected Candidate; 6 it ended otherwise (agent_failed, agent_timeout, "
    "agent_exited, budget_exhausted, validation_failed, assessment_failed, or no Candidate selected: the reason "
    "and the end of the Agent's log are printed); 2 a wrong option or input; 3 the record is missing or damaged; "
    "4 another process holds the Run; 5 an Environment or Host fault; 130 interrupted (Ctrl-C): resume it."
)

_REASONS: Final = {
    "agent_failed": "the Agent exited with an error (or could not start) before it finished",
    "agent_timeout": "the Agent was stopped after --agent-timeout seconds, before it finished",
    "agent_exited": "the Agent exited without finishing (it named no Candidates)",
    "budget_exhausted": "the Agent spent the whole Episode budget without finishing",
    "validation_failed": "Validation could not run (evoledger ledger log RUN --kind run-ended says why)",
    "assessment_failed": "Assessment could not run (evoledger ledger log RUN --kind run-ended says why)",
    "finished": "the Agent finished but no Candidate was selected",
    "running": "the Run has not ended",
}
_TAIL_BYTES: Final = 8192
_AGENT_DIR: Final = re.compile(r"agent-([0-9]{1,6})")


def _last_attempt(host: int) -> str | None:
    with os.scandir(host) as listing:
        attempts = [
            (int(m.group(1)), e.name)
            for _, e in zip(range(10_000), listing, strict=False)
            if (m := _AGENT_DIR.fullmatch(e.name))
        ]
    return max(attempts)[1] if attempts else None


def _tail(folder: int, name: str, shown: Path, lines: int) -> list[str]:
    try:
        fd = open_file_at(folder, name, os.O_RDONLY, shown)
    except FileNotFoundError:
        return []
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - _TAIL_BYTES), os.SEEK_SET)
        data = os.read(fd, _TAIL_BYTES)
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="backslashreplace")
    return [printable(line) for line in text.splitlines() if line.strip()][-lines:]


def agent_log_tail(run_dir: Path, lines: int = 15) -> dict[str, list[str]]:
    """The last ``lines`` non-blank lines of the latest Agent attempt's ``stderr.log`` and ``stdout.log``."""
    tails: dict[str, list[str]] = {}
    try:
        root = open_root(run_dir)
    except OSError:
        return tails
    try:
        host = open_dir_at(root, ("host",), run_dir)
        if host is None:
            return tails
        try:
            attempt = _last_attempt(host)
        finally:
            os.close(host)
        if attempt is None:
            return tails
        folder = open_dir_at(root, ("host", attempt), run_dir)
        if folder is None:
            return tails
        try:
            for name in ("stderr.log", "stdout.log"):
                shown = run_dir / "host" / attempt / name
                if found := _tail(folder, name, shown, lines):
                    tails[f"host/{attempt}/{name}"] = found
        finally:
            os.close(folder)
    except (OSError, EvoLedgerError):  # an odd run directory must not hide the Run's outcome
        return tails
    finally:
        os.close(root)
    return tails


def exit_for_run(run_dir: Path, reason: str, selected: str | None, console: Console, message: str = "") -> None:
    """Return for a Run that finished with a selected Candidate; else explain on ``console`` and exit non-zero.

    ``message`` is what the terminal Event recorded beyond its reason (e.g. why the Agent could not be started).
    """
    if reason == "finished" and selected is not None:
        return
    why = _REASONS.get(reason, "the Run ended early")
    console.print(f"error: the Run ended {printable(reason)}: {why}.", highlight=False, markup=False, soft_wrap=True)
    if message:
        console.print(f"  {printable(message)}", highlight=False, markup=False, soft_wrap=True)
    for name, lines in agent_log_tail(run_dir).items():
        console.print(f"last lines of {name}:", highlight=False, markup=False, soft_wrap=True)
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    if reason in ("agent_failed", "agent_timeout", "agent_exited", "budget_exhausted"):
        console.print(
            f"full logs: {printable(run_dir / 'host')}/agent-*/", highlight=False, markup=False, soft_wrap=True
        )
    raise SystemExit(RUN_NOT_FINISHED)


@contextmanager
def resume_hint_on_interrupt(run_dir: Path, console: Console) -> Iterator[None]:
    """On Ctrl-C or SIGTERM inside the block: say how to continue the Run; exit :data:`INTERRUPTED` (130) on Ctrl-C,
    or let :class:`Terminated` end the process by SIGTERM."""
    try:
        yield
    except KeyboardInterrupt as exc:
        console.print(
            f"interrupted: the Run in {printable(run_dir)} is kept; continue it with: evoledger resume "
            f"{printable(run_dir)}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        if isinstance(exc, Terminated):
            raise
        raise SystemExit(INTERRUPTED) from None
