"""The HTML report of Runs: what ``evoledger report`` writes and ``evoledger run`` / ``resume`` leave in ``host/``.

The report is built by the exporter ``evoledger.exporters.html_report`` (loaded by import string: the kernel never
imports the exporters statically) from the Runs' ledgers, with each Run's ``evoledger replay`` verdict (the log-only
audit: integrity, protocol, projections; never ``--execute``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.cli.terminal_text import printable
from evoledger.kernel.registry import load_object
from evoledger.kernel.run.layout import REPORT_HTML_NAME, RunLayout, write_report
from evoledger.ledger.errors import EvoLedgerError, InputError
from evoledger.ledger.run_files import write_file_at
from rich.console import Console

__all__ = [
    "REPORT_BUILDER",
    "RenderedFigure",
    "audit_verdict",
    "leave_host_report",
    "rendered_episodes",
    "report_html",
    "write_host_report",
    "write_html",
]

REPORT_BUILDER: Final = "evoledger.exporters.html_report:build_report"
"""The import string of the report builder."""


def audit_verdict(run_dir: Path) -> dict[str, Any]:
    """The Run's ``evoledger replay`` verdict (no ``--execute``) as ``ReplayReport.to_dict()``; a record the audit
    cannot read gives ``ok: false`` and the reason."""
    from evoledger.kernel.replay import replay  # only when a report is made

    try:
        return replay(run_dir).to_dict()
    except EvoLedgerError as exc:
        return {"ok": False, "error": str(exc)[:1000], "checks": []}


def report_html(run_dirs: Sequence[Path], *, audit: bool = True, renders: Sequence[Any] = ()) -> str:
    """The report of ``run_dirs`` as HTML text (``audit``: with each Run's replay verdict)."""
    build = load_object(REPORT_BUILDER)
    html: str = build(list(run_dirs), audit=audit_verdict if audit else None, renders=renders)
    return html


@dataclass(frozen=True, slots=True)
class RenderedFigure:
    """One rendered Episode as the report embeds it: a title, a media type and its bytes."""

    title: str
    media_type: str
    data: bytes


def rendered_episodes(run_dirs: Sequence[Path], count: int, *, isolation: str) -> list[RenderedFigure]:
    """Up to ``count`` Episodes of each Run, re-executed and drawn as ``replay --render`` does (a GIF, or a reward
    chart for a Benchmark without a renderer): the selected Candidate's best and worst public Episodes.

    A re-run that differs from its record is still drawn, with a red band on every frame, and its title says so."""
    from evoledger.kernel.replay import episodes_worth_rendering, render_recorded_episode  # only when asked for

    figures: list[RenderedFigure] = []
    for run_dir in run_dirs:
        for name in episodes_worth_rendering(run_dir, count):
            done = render_recorded_episode(run_dir, name, fmt="gif", isolation=isolation, strict=False)
            facts = f"return {done.episode_return:.6g}, {done.steps} steps, {done.status}"
            title = f"{run_dir.name}: {done.episode} ({facts})"
            if not done.matches_recording:
                title += ": THE RE-RUN DIFFERS FROM THE RECORD"
            if done.note:
                title += f"; {done.note}"
            figures.append(RenderedFigure(title, done.media_type, done.data))
    return figures


def write_html(out: Path, html: str) -> None:
    """Atomically write ``html`` to ``out`` (missing parent folders created; a link at ``out`` replaced, not followed).

    Raises :class:`InputError` when ``out`` is a folder or cannot be written.
    """
    if out.is_dir():
        raise InputError(f"--out {out} is a folder; name the HTML file to write, e.g. --out {out / 'report.html'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        folder = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise InputError(f"cannot write --out {out}: {exc.strerror or exc}; choose another path") from None
    try:
        write_file_at(folder, out.name, html.encode("utf-8"), out)
    except OSError as exc:
        raise InputError(f"cannot write --out {out}: {exc.strerror or exc}; choose another path") from None
    finally:
        os.close(folder)


def write_host_report(run_dir: Path) -> Path:
    """Write ``host/report.html`` of the Run in ``run_dir`` (never through a link) and return its path.

    Raises :class:`~evoledger.ledger.errors.EvoLedgerError` or :class:`OSError` when it cannot be built or written.
    """
    layout = RunLayout(run_dir)
    write_report(layout, report_html([run_dir]).encode("utf-8"), name=REPORT_HTML_NAME)
    return layout.report_html


def leave_host_report(run_dir: Path, console: Console) -> Path | None:
    """What ``run`` and ``resume`` do at the end: write ``host/report.html``; if that fails, say why on ``console``
    and return ``None`` (the Run's outcome and exit code stand)."""
    try:
        return write_host_report(run_dir)
    except (EvoLedgerError, OSError) as exc:
        console.print(f"warning: host/report.html was not written: {printable(exc)}", markup=False, highlight=False)
        return None
