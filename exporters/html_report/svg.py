"""Inline SVG charts, written by hand: axes with round ticks, lines, markers, histograms and bars.

Hand-written SVG rather than a charting library: the report is drawn at the end of every ``evoledger run``, so it
must cost milliseconds and import nothing heavy; SVG needs no script (the page runs none, so it shows the same
wherever scripts are blocked), prints and zooms sharply, and is plain text that a test can read without a browser.
Every number is formatted with a fixed precision, so the same data gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

__all__ = ["PALETTE", "Frame", "axes", "frame", "histogram", "marker", "nice_ticks", "number", "polyline", "svg"]

PALETTE: Final = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
"""Series colours (matplotlib's first eight), cycled when a comparison has more Runs."""


def number(value: float) -> str:
    """A value for a label: integers without decimals, others with up to 3 significant decimals.

    >>> number(500.0), number(12.3456), number(-0.5), number(1234567.0)
    ('500', '12.35', '-0.5', '1.235e+06')
    """
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    if abs(value) >= 1e6 or (value != 0 and abs(value) < 1e-3):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
    return f"{value:.4g}"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (about ``count`` of them).

    >>> nice_ticks(0, 100)
    [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    >>> nice_ticks(8, 500)
    [0.0, 100.0, 200.0, 300.0, 400.0, 500.0]
    """
    if not hi > lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(lo / step) * step
    ticks: list[float] = []
    value = start
    while value < hi + step * 0.5 and len(ticks) < 50:
        ticks.append(round(value, 10) + 0.0)
        value += step
    return ticks


@dataclass(frozen=True, slots=True)
class Frame:
    """A plot area and the linear scales from data to pixels."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float

    def x(self, value: float) -> float:
        span = self.x_hi - self.x_lo or 1.0
        return self.left + (value - self.x_lo) / span * (self.width - self.left - self.right)

    def y(self, value: float) -> float:
        span = self.y_hi - self.y_lo or 1.0
        return self.height - self.bottom - (value - self.y_lo) / span * (self.height - self.top - self.bottom)

    def point(self, x: float, y: float) -> str:
        return f"{self.x(x):.1f},{self.y(y):.1f}"


def frame(
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    width: int = 720,
    height: int = 320,
    x_floor: float | None = 0.0,
    x_ceiling: float | None = None,
) -> tuple[Frame, list[float], list[float]]:
    """A :class:`Frame` covering ``xs`` and ``ys`` with round ticks, and those ticks."""
    x_lo = min([*xs, *([] if x_floor is None else [x_floor])], default=0.0)
    x_hi = max([*xs, *([] if x_ceiling is None else [x_ceiling])], default=1.0)
    y_lo, y_hi = min(ys, default=0.0), max(ys, default=1.0)
    if y_hi == y_lo:
        y_lo, y_hi = y_lo - 1.0, y_hi + 1.0
    x_ticks, y_ticks = nice_ticks(x_lo, x_hi, 6), nice_ticks(y_lo, y_hi, 5)
    box = Frame(width, height, 64, 16, 14, 40, x_ticks[0], max(x_ticks[-1], x_hi), y_ticks[0], max(y_ticks[-1], y_hi))
    return box, x_ticks, y_ticks


def axes(box: Frame, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str) -> list[str]:
    """The grid, tick labels and axis titles of ``box`` as SVG elements."""
    parts = [
        f'<rect class="plot" x="{box.left}" y="{box.top}" width="{box.width - box.left - box.right}" '
        f'height="{box.height - box.top - box.bottom}"/>'
    ]
    base = box.height - box.bottom
    for t in y_ticks:
        y = box.y(t)
        parts.append(f'<line class="grid" x1="{box.left}" x2="{box.width - box.right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{box.left - 6}" y="{y + 4:.1f}" text-anchor="end">{number(t)}</text>')
    for t in x_ticks:
        x = box.x(t)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{box.top}" y2="{base}"/>')
        parts.append(f'<text class="tick" x="{x:.1f}" y="{base + 16}" text-anchor="middle">{number(t)}</text>')
    parts.append(
        f'<text class="axis" x="{(box.left + box.width - box.right) / 2:.1f}" y="{box.height - 6}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text class="axis" transform="translate(14,{(box.top + base) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    return parts


def svg(box: Frame, parts: Sequence[str], label: str) -> str:
    """The ``<svg>`` element holding ``parts``, named ``label`` for screen readers."""
    return (
        f'<svg class="chart" role="img" aria-label="{escape(label)}" viewBox="0 0 {box.width} {box.height}" '
        f'width="{box.width}" height="{box.height}">' + "".join(parts) + "</svg>"
    )


def polyline(box: Frame, points: Sequence[tuple[float, float]], css: str, *, step: bool = False) -> str:
    """A line through ``points`` (data units); ``step``: horizontal then vertical (a running best)."""
    coords: list[str] = []
    for i, (x, y) in enumerate(points):
        if step and i > 0:
            coords.append(box.point(x, points[i - 1][1]))
        coords.append(box.point(x, y))
    return f'<polyline class="{css}" points="{" ".join(coords)}"/>'


def marker(box: Frame, x: float, y: float, shape: str, css: str, title: str, size: float = 4.5) -> str:
    """A marker at ``(x, y)`` with a hover title: ``circle``, ``square``, ``diamond``, ``triangle`` or ``star``."""
    cx, cy = box.x(x), box.y(y)
    tip = f"<title>{escape(title)}</title>"
    if shape == "circle":
        return f'<circle class="{css}" cx="{cx:.1f}" cy="{cy:.1f}" r="{size:.1f}">{tip}</circle>'
    if shape == "square":
        return (
            f'<rect class="{css}" x="{cx - size:.1f}" y="{cy - size:.1f}" width="{2 * size:.1f}" '
            f'height="{2 * size:.1f}">{tip}</rect>'
        )
    if shape == "diamond":
        pts = [(cx, cy - size * 1.3), (cx + size * 1.3, cy), (cx, cy + size * 1.3), (cx - size * 1.3, cy)]
    elif shape == "triangle":
        pts = [(cx, cy - size * 1.4), (cx + size * 1.3, cy + size), (cx - size * 1.3, cy + size)]
    else:  # a five-pointed star
        pts = [
            (cx + math.sin(k * math.pi / 5) * r, cy - math.cos(k * math.pi / 5) * r)
            for k, r in ((k, size * 2.0 if k % 2 == 0 else size * 0.85) for k in range(10))
        ]
    coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
    return f'<polygon class="{css}" points="{coords}">{tip}</polygon>'


def histogram(values: Sequence[float], bins: int = 20) -> list[tuple[float, float, int]]:
    """``values`` counted in up to ``bins`` equal bins: ``(low, high, count)``; one value or one bin when all equal.

    >>> histogram([1.0, 2.0, 2.0, 3.0], bins=2)
    [(1.0, 2.0, 1), (2.0, 3.0, 3)]
    """
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi == lo:
        return [(lo - 0.5, hi + 0.5, len(values))]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return [(lo + i * width, lo + (i + 1) * width, c) for i, c in enumerate(counts)]
