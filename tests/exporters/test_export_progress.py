"""``export_dataset(on_progress=...)``: each config counts up to a total known before it starts.

Episodes for ``steps`` and ``episodes`` (and ``minari``), once per Episode; rows for ``submissions`` and
``messages``, once per batch written. Nothing is reported per step.
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from pathlib import Path

import pytest
from evoledger.exporters import export_dataset


def _by_config(calls: list[tuple[str, int, int]]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for config, done, total in calls:
        grouped[config].append((done, total))
    return dict(grouped)


def test_every_config_counts_to_the_rows_it_wrote(recorded_run: Path, tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    report = export_dataset(
        [recorded_run],
        tmp_path / "ds",
        visibility="all",
        row_group_rows=1,
        on_progress=lambda *call: calls.append(call),
    )
    grouped = _by_config(calls)
    assert list(grouped) == ["steps", "episodes", "submissions", "messages"]  # one config after the other
    rows = {config.name: sum(split.rows for split in config.splits) for config in report.configs}
    episodes = rows["episodes"]
    assert episodes == report.episodes
    assert rows["steps"] == report.steps > episodes  # steps are counted as their Episodes, not one by one
    for config in ("steps", "episodes"):
        assert grouped[config] == [(done, episodes) for done in range(episodes + 1)], config
    for config in ("submissions", "messages"):  # one row per batch here (row_group_rows=1)
        assert grouped[config] == [(done, rows[config]) for done in range(rows[config] + 1)], config
    assert rows["messages"] == 1


def test_public_visibility_counts_only_the_exported_episodes(recorded_run: Path, tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    report = export_dataset(
        [recorded_run], tmp_path / "ds", configs=["episodes"], on_progress=lambda *call: calls.append(call)
    )
    assert report.episodes is not None
    assert calls == [("episodes", done, report.episodes) for done in range(report.episodes + 1)]


@pytest.mark.skipif(
    importlib.util.find_spec("minari") is None or importlib.util.find_spec("PIL") is None,
    reason="minari (and Pillow, which its storage imports) are not installed: pip install 'evoledger[minari]'",
)
def test_a_minari_export_counts_its_episodes(recorded_run: Path, tmp_path: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    report = export_dataset(
        [recorded_run], tmp_path / "m", output_format="minari", on_progress=lambda *call: calls.append(call)
    )
    assert report.episodes is not None
    assert calls == [("minari", done, report.episodes) for done in range(report.episodes + 1)]
