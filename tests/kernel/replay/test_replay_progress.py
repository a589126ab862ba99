"""``replay(execute=True)`` reports its progress: ``on_episode(done, total)`` once per re-run Episode."""

from __future__ import annotations

from pathlib import Path

from evoledger.kernel.replay import replay


def test_execute_reports_each_rerun_episode_once_with_the_total(recorded_run: Path) -> None:
    calls: list[tuple[int, int]] = []
    report = replay(recorded_run, execute=True, on_episode=lambda done, total: calls.append((done, total)))
    assert report.check("execution").status == "pass", report.to_json()
    total = int(report.check("execution").summary.split(" of ")[1].split()[0])  # "N of T Episodes reproduced"
    assert total > 12  # the 12 training Episodes, then Validation and Assessment
    assert calls == [(done, total) for done in range(total + 1)]


def test_without_execute_nothing_is_reported(recorded_run: Path) -> None:
    calls: list[tuple[int, int]] = []
    replay(recorded_run, on_episode=lambda done, total: calls.append((done, total)))
    assert calls == []
