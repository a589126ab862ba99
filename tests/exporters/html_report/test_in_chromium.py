"""The default Run's report as a person sees it: opened in a real headless Chromium, the learning curve is drawn,
the page logs no error and makes no network request (issue 17, part 3).

Needs the Debian package ``chromium`` (``.ci/run`` installs it when missing); skipped without it.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from evoledger.tests.support.chromium import chromium_path, open_page
from evoledger.tests.support.readme_run import MainJobRun

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (apt-get install chromium; .ci/run installs it)"
)

_PLOT_AREA = """(() => {
  const plot = document.querySelector("svg.chart .plot");  // the learning curve's plot rectangle, the first chart
  if (!plot) return null;
  const box = plot.getBoundingClientRect();
  return {x: box.x + window.scrollX + 2, y: box.y + window.scrollY + 2, width: box.width - 4, height: box.height - 4};
})()"""
_BACKGROUND = ((255, 255, 255), (234, 238, 242))  # the plot's fill and its grid lines
_CURVE = (31, 119, 180)  # the best-so-far line and the Submissions' markers


def _near(pixel: tuple[int, int, int], colour: tuple[int, int, int], tolerance: int = 24) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))


def test_the_default_runs_report_draws_its_curve_offline_without_errors(
    readme_main_run: MainJobRun, tmp_path: Path
) -> None:
    pytest.importorskip("websockets", reason="the DevTools client needs websockets (pip install -e '.[dev]')")
    image_module = pytest.importorskip("PIL.Image", reason="reading the screenshot needs Pillow (the dev extra)")
    control = tmp_path / "control.html"  # the harness must see what it checks for
    control.write_text('<img src="http://127.0.0.1:9/x.png"><script>console.error("seen")</script>', encoding="utf-8")
    report = readme_main_run.run_dir / "host" / "report.html"
    with open_page(control) as page:
        assert "http://127.0.0.1:9/x.png" in page.requests
        assert "console: seen" in page.errors
        page.load(report)
        requests, errors = list(page.requests), list(page.errors)
        area = page.evaluate(_PLOT_AREA)
        assert area is not None
        assert area["width"] > 300
        assert area["height"] > 150, area
        shot = page.screenshot(area)
        (tmp_path / "page.png").write_bytes(page.screenshot())  # kept with the test's files, for a look
    assert requests == [report.resolve().as_uri()]  # the page itself, nothing else
    assert errors == []
    raw = image_module.open(io.BytesIO(shot)).convert("RGB").tobytes()
    pixels = [(raw[i], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]
    drawn = [p for p in pixels if not any(_near(p, b, 6) for b in _BACKGROUND)]
    assert len(drawn) > 0.002 * len(pixels), f"{len(drawn)} of {len(pixels)} plot pixels drawn"
    assert sum(_near(p, _CURVE) for p in drawn) > 200  # the curve itself, not only labels
