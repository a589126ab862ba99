"""The report page: one self-contained HTML document (styles and charts inline, no script, no request).

The page's Content-Security-Policy forbids every fetch (``default-src 'none'``; images and media only as ``data:``
URIs; inline styles), so even text a record holds cannot make the browser load anything. Everything recorded is
HTML-escaped. The same Runs give the same bytes (no clock is read): the report is a projection of the ledgers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any, Final

from evoledger import __version__
from evoledger.exporters.html_report.charts import failure_chart, learning_curve_chart, overlay_chart, returns_chart
from evoledger.exporters.html_report.leaderboard import leaderboard
from evoledger.exporters.html_report.media import MediaLike, media_html
from evoledger.exporters.html_report.run_data import ReportRun
from evoledger.exporters.html_report.svg import PALETTE, number
from evoledger.ledger.errors import InputError
from evoledger.projections.learning_curve import LearningCurve

__all__ = ["CONTENT_SECURITY_POLICY", "MAX_DIFF_CHARS", "render_report"]

CONTENT_SECURITY_POLICY: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; media-src data:"
MAX_DIFF_CHARS: Final = 2_000_000
"""Program diffs shown in one report, in characters; later diffs are replaced by a note."""

_CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#fff;margin:0 auto;
max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}pre{background:#f6f8fa;padding:8px;overflow:auto;
max-height:420px;margin:4px 0}.muted{color:#57606a}.ok{color:#1a7f37;font-weight:600}
.bad{color:#cf222e;font-weight:600}tr.selected td{background:#fff8c5}table.submissions td{white-space:nowrap}
.chart{max-width:100%;height:auto;display:block}.chart text{font:11px system-ui,sans-serif;fill:#1b1f24}
.chart .axis{font-size:12px}.plot{fill:#fff;stroke:#8c959f}.grid{stroke:#eaeef2}
.best{fill:none;stroke:#1f77b4;stroke-width:2}.overlay{fill:none;stroke-width:2}
.sub{fill:#1f77b4;stroke:#fff}.fail{fill:#d62728;stroke:#fff}.infra{fill:#ff7f0e;stroke:#fff}
.noscore{fill:#8c959f}.cand{fill:none;stroke:#2ca02c;stroke-width:2}.sel{fill:#f2c744;stroke:#6e5600}
.val{fill:none;stroke:#9467bd;stroke-width:2}.assess{stroke:#111;stroke-width:1.5;stroke-dasharray:6 4}
.assess-label{font-weight:600}.bar-train{fill:#1f77b4;fill-opacity:.75}.bar-assess{fill:#ff7f0e;fill-opacity:.6}
.bar-fail{fill:#d62728}.bar-infra{fill:#ff7f0e}.overlay-assess{stroke:#111}
ul.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
ul.legend li{display:flex;align-items:center;gap:5px}.swatch{display:inline-block;width:14px;height:4px}
.diff .add{color:#1a7f37}.diff .del{color:#cf222e}.diff .hunk{color:#8250df}
figure.media{display:inline-block;margin:8px 16px 8px 0;vertical-align:top}
figure.media img,figure.media video{max-width:480px;image-rendering:pixelated}figcaption{font-size:12px}
"""

_LEGEND: Final = (
    ('<circle class="sub" cx="7" cy="7" r="4.5"/>', "Submission (public score)"),
    ('<polyline class="best" points="0,10 7,10 7,4 14,4"/>', "best so far"),
    ('<circle class="fail" cx="7" cy="7" r="4.5"/>', "with Policy failures"),
    ('<polygon class="infra" points="7,1 13,7 7,13 1,7"/>', "with infra faults"),
    ('<polygon class="noscore" points="7,1 13,12 1,12"/>', "no score"),
    ('<circle class="cand" cx="7" cy="7" r="5.5"/>', "Candidate"),
    ('<rect class="val" x="2" y="2" width="10" height="10"/>', "Validation score"),
    ('<polygon class="sel" points="7,0 9,5 14,5 10,8 12,14 7,10 2,14 4,8 0,5 5,5"/>', "selected"),
    ('<line class="assess" x1="0" x2="14" y1="7" y2="7"/>', "Assessment score"),
)


def _legend() -> str:
    items = "".join(
        f'<li><svg width="14" height="14" viewBox="0 0 14 14">{shape}</svg>{escape(text)}</li>'
        for shape, text in _LEGEND
    )
    return f'<ul class="legend">{items}</ul>'


def _score(value: float | None) -> str:
    return "&mdash;" if value is None else escape(number(value))


def _seconds(value: float | None) -> str:
    return "not recorded" if value is None else f"{value:.2f} s"


def _verdict(audit: Any) -> str:
    if not isinstance(audit, dict):
        return '<span class="muted">not audited (run <code>evoledger replay RUN</code>)</span>'
    checks = audit.get("checks")
    rows = []
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict):
            rows.append(f"{escape(str(check.get('name')))}: {escape(str(check.get('status')))}")
    detail = f' <span class="muted">({"; ".join(rows)})</span>' if rows else ""
    if audit.get("ok") is True:
        return f'<span class="ok">pass</span>: every check passed{detail}'
    return f'<span class="bad">FAIL</span>: a check failed, see <code>evoledger replay RUN</code>{detail}'


def _facts(run: ReportRun) -> str:
    c, s = run.curve, run.curve.state
    params = json.dumps(dict(c.benchmark_params), sort_keys=True)
    candidates = (
        ", ".join(
            f"{escape(cand.submission_id)} ({_score(cand.score)}, {cand.policy_failures} failures)"
            for cand in c.candidates
        )
        or ", ".join(escape(x) for x in s.candidates)
        or "&mdash;"
    )
    own = None
    if c.agent_seconds is not None and c.evaluation_seconds is not None:
        own = max(0.0, c.agent_seconds - c.evaluation_seconds)
    times = (
        f"Agent process {_seconds(c.agent_seconds)} (its own work {_seconds(own)}, waiting on evaluation "
        f"{_seconds(c.evaluation_seconds)}); judging (Validation and Assessment) {_seconds(c.judging_seconds)}"
    )
    reason = escape(s.ended_reason or "not ended")
    if c.end_message:
        reason += f' <span class="muted">{escape(c.end_message[:500])}</span>'
    rows = [
        ("Benchmark", f'<code>{escape(c.benchmark_id)}</code> <span class="muted">{escape(params)}</span>'),
        ("Agent", escape(c.agent_label or "none started")),
        ("terminal reason", reason),
        ("budget", f"{s.charged - s.refunded} of {s.episode_budget} Episodes spent ({s.refunded} refunded)"),
        ("Submissions", f"{s.submissions_used} accepted, {s.submission_rejections} refused"),
        ("Candidates (Validation score)", candidates),
        ("selected", escape(c.selected or "none")),
        ("Assessment score", f"{_score(c.assessment_score)} ({len(c.assessment_returns)} held-out Episodes)"),
        ("best public score", _score(c.best_public_score)),
        ("time", times),
        ("seed", "random key" if c.seed is None else f"{c.seed} (reproducible, and predictable to whoever knows it)"),
        ("ledger head", f"<code>{escape(c.head_hash or '')}</code> ({s.events} events)"),
        ("created by", escape(c.created_by)),
        ("replay verdict", _verdict(run.audit)),
        ("configuration", f"<details><summary>show</summary><pre>{escape(_config(c))}</pre></details>"),
    ]
    body = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="facts">{body}</table>'


def _config(curve: LearningCurve) -> str:
    return json.dumps(dict(curve.state.config), indent=2, sort_keys=True, default=str)


def _diff_html(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else "hunk" if line[:2] == "@@" else ""
        lines.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


class _DiffBudget:
    def __init__(self) -> None:
        self.left = MAX_DIFF_CHARS

    def show(self, text: str) -> str:
        if not text:
            return '<span class="muted">same Program</span>'
        if len(text) > self.left:
            return '<span class="muted">not shown (the report\'s diff limit is reached)</span>'
        self.left -= len(text)
        n = text.count("\n") + 1
        return f"<details><summary>diff ({n} lines)</summary>{_diff_html(text)}</details>"


def _episodes(selected: int, charged: int) -> str:
    return str(selected) if selected == charged else f"{selected} ({charged} charged)"


def _submissions(run: ReportRun, budget: _DiffBudget) -> str:
    c = run.curve
    head = (
        "<tr><th>#</th><th>Submission</th><th>Episodes</th><th>budget spent</th><th>public score</th>"
        "<th>best so far</th><th>Policy failures</th><th>infra faults</th><th>Validation</th><th>Program</th>"
        "<th>change</th></tr>"
    )
    rows = []
    for p in c.points:
        failures = ", ".join(f"{escape(code)} {n}" for code, n in p.failures.items()) or "0"
        is_candidate = p.submission_id in c.state.candidates
        validation = _score(c.validation_score(p.submission_id)) if is_candidate else ""
        if p.submission_id == c.selected:
            validation += " &#9733; selected"
        css = ' class="selected"' if p.submission_id == c.selected else ""
        rows.append(
            f"<tr{css}><td class=num>{p.position}</td><td>{escape(p.submission_id)}</td>"
            f"<td class=num>{_episodes(p.episodes, p.charged)}</td><td class=num>{p.budget_spent}</td>"
            f"<td class=num>{_score(p.score)}</td>"
            f"<td class=num>{_score(p.best_so_far)}</td><td>{failures}</td><td class=num>{p.infra_faults}</td>"
            f"<td>{validation}</td><td><code>{escape(p.program_digest.removeprefix('sha256:')[:12])}</code></td>"
            f"<td>{budget.show(run.diffs.get(p.submission_id, ''))}</td></tr>"
        )
    if not rows:
        return '<p class="empty">No Submission was accepted.</p>'
    return f'<table class="submissions">{head}{"".join(rows)}</table>'


def _labels(runs: Sequence[ReportRun]) -> list[str]:
    """Each Run's label: its id, with its directory where two Runs share an id (a copy, or Runs from two folders)."""
    ids = [r.curve.run_id for r in runs]
    return [r.label if ids.count(r.curve.run_id) == 1 else f"{r.curve.run_id} ({r.path})" for r in runs]


def _run_section(index: int, run: ReportRun, label: str, budget: _DiffBudget) -> str:
    c = run.curve
    train = [r for p in c.points for r in p.returns]
    infra = sum(p.infra_faults for p in c.points)
    return (
        f'<section class="run" id="run-{index}"><h2>Run {escape(label)}</h2>{_facts(run)}'
        f'<h3>Learning curve</h3><div class="plot-area">{learning_curve_chart(c)}</div>{_legend()}'
        f"<h3>Submissions</h3>{_submissions(run, budget)}"
        f'<h3>Episode returns</h3><ul class="legend"><li><span class="swatch" style="background:#1f77b4"></span>'
        f'training ({len(train)})</li><li><span class="swatch" style="background:#ff7f0e"></span>Assessment '
        f"({len(c.assessment_returns)})</li></ul>{returns_chart(train, c.assessment_returns)}"
        f"<h3>Failures by code</h3>{failure_chart(c.failures_by_code(), infra)}</section>"
    )


def _comparison(runs: Sequence[ReportRun], labels: Sequence[str]) -> str:
    curves = [r.curve for r in runs]
    legend = "".join(
        f'<li><span class="swatch" style="background:{PALETTE[i % len(PALETTE)]}"></span>{escape(label)}</li>'
        for i, label in enumerate(labels)
    )
    rows = []
    for row in leaderboard(curves):
        mean = _score(row.mean)
        interval = "&mdash;" if row.half_width is None else f"&plusmn; {escape(number(row.half_width))}"
        seeds = ", ".join("random" if s is None else str(s) for s in row.seeds)
        rows.append(
            f"<tr><td>{escape(row.agent)}</td><td><code>{escape(row.benchmark)}</code> "
            f'<span class="muted">{escape(row.params)}</span></td><td class=num>{row.runs}</td>'
            f"<td class=num>{len(row.scores)}</td><td class=num>{mean}</td><td class=num>{interval}</td>"
            f"<td>{escape(seeds)}</td></tr>"
        )
    table = (
        '<table class="leaderboard"><tr><th>Agent</th><th>Benchmark</th><th>Runs</th><th>assessed</th>'
        "<th>mean Assessment score</th><th>95% CI (Student t)</th><th>seeds</th></tr>" + "".join(rows) + "</table>"
    )
    return (
        '<section class="comparison" id="comparison"><h2>Comparison</h2>'
        f'<div class="plot-area">{overlay_chart(curves, labels)}</div><ul class="legend">{legend}</ul>'
        '<p class="muted">Lines: best public score so far; diamonds: each Run\'s Assessment score. The interval is '
        "mean &plusmn; t<sub>0.975, n&minus;1</sub>&middot;s/&radic;n over the assessed Runs of a row (one per seed); "
        f"no interval for a single Run.</p>{table}</section>"
    )


def render_report(runs: Sequence[ReportRun], *, renders: Sequence[MediaLike] = ()) -> str:
    """The report of ``runs`` (a comparison first when there are several) and ``renders`` as one HTML document."""
    if not runs:
        raise InputError("no Run to report; name at least one run directory")
    budget = _DiffBudget()
    title = runs[0].curve.run_id if len(runs) == 1 else f"{len(runs)} Runs"
    labels = _labels(runs)
    toc = "".join(f'<li><a href="#run-{i}">{escape(label)}</a></li>' for i, label in enumerate(labels, start=1))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>evoledger report: {escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>evoledger report: {escape(title)}</h1>",
        f'<p class="muted">Built from the ledger by evoledger {escape(__version__)}; rebuild it at any time with '
        "<code>evoledger report RUN [RUN...] --out report.html</code>.</p>",
        f"<ul>{toc}</ul></header>" if len(runs) > 1 else "</header>",
    ]
    if len(runs) > 1:
        parts.append(_comparison(runs, labels))
    for i, (run, label) in enumerate(zip(runs, labels, strict=True), start=1):
        parts.append(_run_section(i, run, label, budget))
    if renders:
        figures = "".join(media_html(item) for item in renders)
        parts.append(f'<section class="renders" id="renders"><h2>Rendered Episodes</h2>{figures}</section>')
    parts.append("</body></html>\n")
    return "\n".join(parts)
