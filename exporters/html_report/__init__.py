"""The HTML report of one or several Runs: learning curves, Submissions, returns, failures, a comparison.

One self-contained static page (styles and SVG charts inline, no script, no request), built only from the Runs'
ledgers through the learning-curve projection (``projections/learning_curve.py``), so it can be rebuilt at any
time. ``evoledger report`` writes it, and ``evoledger run`` / ``resume`` leave one in ``host/report.html``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evoledger.exporters.html_report.leaderboard import LeaderboardRow, leaderboard, mean_interval
from evoledger.exporters.html_report.media import MEDIA_TYPES, EmbeddedMedia, MediaLike
from evoledger.exporters.html_report.page import CONTENT_SECURITY_POLICY, render_report
from evoledger.exporters.html_report.run_data import ReportRun, read_report_run

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MEDIA_TYPES",
    "EmbeddedMedia",
    "LeaderboardRow",
    "MediaLike",
    "ReportRun",
    "build_report",
    "leaderboard",
    "mean_interval",
    "read_report_run",
    "render_report",
]


def build_report(
    run_dirs: Sequence[str | os.PathLike[str]],
    *,
    audit: Callable[[Path], Mapping[str, Any] | None] | None = None,
    renders: Sequence[MediaLike] = (),
) -> str:
    """The report of the Runs in ``run_dirs`` as HTML text.

    ``audit``: called with each Run's directory once the Run has been read; it returns the Run's ``evoledger replay``
    verdict as ``ReplayReport.to_dict()`` gives it (``None``: not audited). ``renders``: media for the "Rendered
    Episodes" section (anything with ``title``, ``media_type`` and ``data``; see :data:`MEDIA_TYPES`).
    """
    runs = []
    for run_dir in run_dirs:
        run = read_report_run(run_dir)
        runs.append(replace(run, audit=audit(run.path)) if audit is not None else run)
    return render_report(runs, renders=renders)
