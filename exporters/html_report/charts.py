"""The report's charts: a Run's learning curve, several Runs' curves overlaid, Episode returns, failures by code."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from evoledger.exporters.html_report.svg import (
    PALETTE,
    Frame,
    axes,
    frame,
    histogram,
    marker,
    nice_ticks,
    number,
    polyline,
    svg,
)
from evoledger.projections.learning_curve import LearningCurve, SubmissionPoint

__all__ = ["failure_chart", "learning_curve_chart", "overlay_chart", "returns_chart"]

_X_LABEL = "cumulative Episode budget spent"


def _point_title(p: SubmissionPoint, curve: LearningCurve) -> str:
    score = "no score" if p.score is None else f"public score {number(p.score)}"
    text = f"{p.submission_id}: {score}, {p.episodes} Episodes, budget spent {p.budget_spent}"
    if p.policy_failures:
        text += ", Policy failures " + ", ".join(f"{code} {n}" for code, n in p.failures.items())
    if p.infra_faults:
        text += f", {p.infra_faults} infra faults"
    validation = curve.validation_score(p.submission_id)
    if p.submission_id in curve.state.candidates:
        text += ", Candidate" + ("" if validation is None else f" (Validation {number(validation)})")
    if p.submission_id == curve.selected:
        text += ", selected"
    return text


def learning_curve_chart(curve: LearningCurve) -> str:
    """Public score against budget spent, the best so far, failures and infra faults, Candidates and the Assessment."""
    points = curve.points
    scored = [p for p in points if p.score is not None]
    validations = [v for p in points if (v := curve.validation_score(p.submission_id)) is not None]
    extra = [s for s in (curve.assessment_score,) if s is not None]
    ys = [p.score for p in scored if p.score is not None] + validations + extra
    xs = [float(p.budget_spent) for p in points]
    box, x_ticks, y_ticks = frame(xs, ys, x_ceiling=float(curve.state.episode_budget or 1))
    parts = axes(box, x_ticks, y_ticks, _X_LABEL, "public score")
    best = [(float(p.budget_spent), p.best_so_far) for p in points if p.best_so_far is not None]
    if best:
        steps = [(x, y) for x, y in best if y is not None]
        parts.append(polyline(box, steps, "best", step=True))
    if curve.assessment_score is not None:
        y = box.y(curve.assessment_score)
        parts.append(
            f'<line class="assess" x1="{box.left}" x2="{box.width - box.right}" y1="{y:.1f}" y2="{y:.1f}">'
            f"<title>Assessment score {number(curve.assessment_score)}</title></line>"
        )
        parts.append(
            f'<text class="assess-label" x="{box.width - box.right - 4}" y="{y - 5:.1f}" text-anchor="end">'
            f"Assessment {number(curve.assessment_score)}</text>"
        )
    candidates = set(curve.state.candidates)
    for p in points:
        x = float(p.budget_spent)
        title = _point_title(p, curve)
        if p.score is None:
            parts.append(marker(box, x, box.y_lo, "triangle", "noscore", title))
        else:
            shape, css = "circle", "sub"
            if p.policy_failures:
                css = "fail"
            if p.infra_faults:
                shape, css = "diamond", "infra"
            parts.append(marker(box, x, p.score, shape, css, title))
            if p.submission_id in candidates:
                parts.append(marker(box, x, p.score, "circle", "cand", title, size=8.0))
            if p.submission_id == curve.selected:
                parts.append(marker(box, x, p.score, "star", "sel", title, size=6.0))
        validation = curve.validation_score(p.submission_id)
        if validation is not None:
            parts.append(
                marker(box, x, validation, "square", "val", f"{p.submission_id}: Validation score {number(validation)}")
            )
    return svg(box, parts, f"learning curve of {curve.run_id}")


def overlay_chart(curves: Sequence[LearningCurve], labels: Sequence[str]) -> str:
    """Several Runs' best-so-far public scores against budget spent, with each Run's Assessment score marked."""
    xs = [float(p.budget_spent) for c in curves for p in c.points]
    ys = [p.best_so_far for c in curves for p in c.points if p.best_so_far is not None]
    ys += [c.assessment_score for c in curves if c.assessment_score is not None]
    budget = max((c.state.episode_budget for c in curves), default=1)
    box, x_ticks, y_ticks = frame(xs, [y for y in ys if y is not None], x_ceiling=float(budget or 1))
    parts = axes(box, x_ticks, y_ticks, _X_LABEL, "best public score so far")
    for i, (curve, label) in enumerate(zip(curves, labels, strict=True)):
        colour = PALETTE[i % len(PALETTE)]
        steps = [(float(p.budget_spent), p.best_so_far) for p in curve.points if p.best_so_far is not None]
        if steps:
            line = polyline(box, [(x, y) for x, y in steps if y is not None], "overlay", step=True)
            parts.append(line.replace("<polyline ", f'<polyline stroke="{colour}" ', 1))
            last_x = float(curve.points[-1].budget_spent)
            for x, y in steps:
                if y is not None:
                    dot = marker(box, x, y, "circle", "overlay-dot", f"{label}: best {number(y)} at {number(x)}", 3.0)
                    parts.append(dot.replace("<circle ", f'<circle fill="{colour}" ', 1))
            if curve.assessment_score is not None:
                tip = f"{label}: Assessment {number(curve.assessment_score)}"
                diamond = marker(box, last_x, curve.assessment_score, "diamond", "overlay-assess", tip, 5.0)
                parts.append(diamond.replace("<polygon ", f'<polygon fill="{colour}" ', 1))
    return svg(box, parts, "learning curves of every Run")


def returns_chart(train: Sequence[float], assessment: Sequence[float]) -> str:
    """Histogram of training Episode returns, with the Assessment's Episode returns over it."""
    both = [*train, *assessment]
    bins = histogram(both, bins=20)
    width, height = 720, 240
    if not bins:
        return '<p class="empty">No Episode ended.</p>'
    lo, hi = bins[0][0], bins[-1][1]
    edges = [(b[0], b[1]) for b in bins]
    train_counts = _count(train, edges)
    assess_counts = _count(assessment, edges)
    top = max([*train_counts, *assess_counts, 1])
    y_ticks = nice_ticks(0, top, 4)
    box = Frame(width, height, 64, 16, 14, 40, lo, hi, 0.0, max(y_ticks[-1], top))
    parts = axes(box, _inside(nice_ticks(lo, hi, 6), lo, hi), y_ticks, "Episode return", "Episodes")
    for (a, b), n_train, n_assess in zip(edges, train_counts, assess_counts, strict=True):
        x0, x1 = box.x(a), box.x(b)
        w = max(1.0, (x1 - x0) - 1.0)
        for n, css, what in ((n_train, "bar-train", "training"), (n_assess, "bar-assess", "Assessment")):
            if n:
                y = box.y(n)
                parts.append(
                    f'<rect class="{css}" x="{x0 + 0.5:.1f}" y="{y:.1f}" width="{w:.1f}" '
                    f'height="{box.y(0) - y:.1f}"><title>{n} {what} Episodes with return in '
                    f"[{number(a)}, {number(b)})</title></rect>"
                )
    return svg(box, parts, "Episode return distribution")


def _inside(ticks: Sequence[float], lo: float, hi: float) -> list[float]:
    return [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9] or [lo, hi]


def _count(values: Sequence[float], edges: Sequence[tuple[float, float]]) -> list[int]:
    counts = [0] * len(edges)
    for v in values:
        for i, (a, b) in enumerate(edges):
            if a <= v < b or (i == len(edges) - 1 and v <= b):
                counts[i] += 1
                break
    return counts


def failure_chart(failures: dict[str, int], infra_faults: int) -> str:
    """Horizontal bars: Policy failures by code, and infra faults."""
    rows = [*failures.items(), *([("infra fault", infra_faults)] if infra_faults else [])]
    if not rows:
        return '<p class="empty">No Policy failure and no infra fault.</p>'
    width, row_height = 720, 26
    height = 24 + row_height * len(rows)
    top = max(n for _, n in rows)
    label_width = 140
    scale = (width - label_width - 60) / top
    parts: list[str] = []
    for i, (code, n) in enumerate(rows):
        y = 12 + i * row_height
        css = "bar-infra" if code == "infra fault" else "bar-fail"
        parts.append(f'<text class="tick" x="{label_width - 8}" y="{y + 15}" text-anchor="end">{escape(code)}</text>')
        parts.append(
            f'<rect class="{css}" x="{label_width}" y="{y + 2}" width="{max(1.0, n * scale):.1f}" height="18">'
            f"<title>{escape(code)}: {n}</title></rect>"
        )
        parts.append(f'<text class="tick" x="{label_width + n * scale + 6:.1f}" y="{y + 15}">{n}</text>')
    return (
        f'<svg class="chart" role="img" aria-label="failures by code" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}">' + "".join(parts) + "</svg>"
    )
