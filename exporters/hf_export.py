"""Writing the HuggingFace-style Parquet configs of an export (the card is written by ``exporters.dataset``).

Layout: one folder per config, one Parquet file per split::

    steps/train-00000-of-00001.parquet
    steps/validation-00000-of-00001.parquet      (visibility "all" only)
    steps/assessment-00000-of-00001.parquet      (visibility "all" only)
    episodes/...
    submissions/train-00000-of-00001.parquet
    messages/train-00000-of-00001.parquet

Runs are written one after the other in the order given, each streamed from its log. An Evaluation
record (``evoledger evaluate --record-to``) has no Submissions and no Agent session, so it only adds
``steps`` and ``episodes`` rows. A split without
rows gets no file (``datasets`` cannot load an empty split), and a config without any rows is left out
of the card.

Progress (``on_progress(config, done, total)``, when given): each config reports in its natural unit, with a
total known before it starts: Episodes for ``steps`` and ``episodes`` (once per Episode; counting them costs
one more pass over the Episode Events, made only when progress is asked for), rows for ``submissions`` (one
per Submission) and ``messages`` (one per Run), once per batch written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Final

import pyarrow as pa
from evoledger.exporters.messages import message_batch
from evoledger.exporters.options import ConfigName, ExportOptions
from evoledger.exporters.parquet import FileStats, ParquetSink, rows_per_group
from evoledger.exporters.report import ConfigReport, SplitReport
from evoledger.exporters.rows import episode_batches, episode_count, step_batches
from evoledger.exporters.runs import RunFacts
from evoledger.exporters.schema import schema_for
from evoledger.exporters.spaces import ValueEncoding
from evoledger.exporters.submissions import submission_batches
from evoledger.ledger.store import Ledger

__all__ = ["EPISODE_CONFIGS", "SPLITS", "data_file", "write_configs"]

SPLITS: Final = ("train", "validation", "assessment")
EPISODE_CONFIGS: Final = ("steps", "episodes")
"""The configs streamed Episode by Episode (their progress counts Episodes, the others rows)."""
_STEP_OVERHEAD_BYTES: Final = 64
_JSON_VALUE_BYTES: Final = 64


def data_file(config: str, split: str) -> str:
    """The path of a config's split file, relative to the dataset directory."""
    return f"{config}/{split}-00000-of-00001.parquet"


def _step_row_bytes(observation: ValueEncoding, action: ValueEncoding) -> int:
    def size(encoding: ValueEncoding) -> int:
        if not encoding.typed:
            return _JSON_VALUE_BYTES
        return encoding.values_per_row * (4 if encoding.kind == "float" and encoding.float_bits == 32 else 8)

    return _STEP_OVERHEAD_BYTES + 2 * size(observation) + size(action)


def _group_rows(config: ConfigName, options: ExportOptions, observation: ValueEncoding, action: ValueEncoding) -> int:
    if options.row_group_rows is not None:
        return options.row_group_rows
    if config == "steps":
        return rows_per_group(_step_row_bytes(observation, action))
    if config == "episodes":
        return rows_per_group(512)
    return rows_per_group(64 * 1024)  # submissions and messages rows carry Programs and Feedback


def _batches(
    config: ConfigName,
    ledger: Ledger,
    facts: RunFacts,
    options: ExportOptions,
    observation: ValueEncoding,
    action: ValueEncoding,
    batch_rows: int,
    on_episode: Callable[[], None] | None,
) -> Iterator[tuple[str, pa.RecordBatch]]:
    if config == "steps":
        yield from step_batches(
            ledger,
            facts,
            observation,
            action,
            visibility=options.visibility,
            batch_rows=batch_rows,
            on_episode=on_episode,
        )
    elif config == "episodes":
        yield from episode_batches(
            ledger, facts, visibility=options.visibility, batch_rows=batch_rows, on_episode=on_episode
        )
    elif facts.evaluation is not None:
        return  # no Submissions, no Agent session
    elif config == "submissions":
        for batch in submission_batches(ledger, facts, batch_rows=batch_rows):
            yield "train", batch
    else:
        yield "train", message_batch(ledger, facts, reward=options.reward)


def _write_config(
    config: ConfigName,
    runs: Sequence[tuple[Ledger, RunFacts]],
    root: Path,
    options: ExportOptions,
    observation: ValueEncoding,
    action: ValueEncoding,
    progress: _Progress | None,
) -> tuple[ConfigReport, pa.Schema]:
    schema = schema_for(config, observation, action)
    group_rows = _group_rows(config, options, observation, action)
    sinks: dict[str, ParquetSink] = {}
    on_episode = progress.add if progress is not None and config in EPISODE_CONFIGS else None
    rows_written = progress.add if progress is not None and on_episode is None else None

    def sink(split: str) -> ParquetSink:
        if split not in sinks:
            sinks[split] = ParquetSink(root / data_file(config, split), schema, row_group_rows=group_rows)
        return sinks[split]

    try:
        for ledger, facts in runs:
            for split, batch in _batches(config, ledger, facts, options, observation, action, group_rows, on_episode):
                sink(split).write(batch)
                if rows_written is not None:
                    rows_written(batch.num_rows)
        stats: dict[str, FileStats] = {split: s.close() for split, s in sinks.items()}
    except BaseException:
        for s in sinks.values():
            s.abort()
        raise
    splits = tuple(
        SplitReport(
            split=split,
            rows=stats[split].rows,
            files=(data_file(config, split),),
            arrow_bytes=stats[split].arrow_bytes,
            file_bytes=stats[split].file_bytes,
        )
        for split in SPLITS
        if split in stats
    )
    return ConfigReport(config, splits), schema


class _Progress:
    """One config's count towards its total, reported to ``on_progress`` as it grows."""

    def __init__(self, on_progress: Callable[[str, int, int], None], config: str, total: int) -> None:
        self._report, self._config, self._total, self._done = on_progress, config, total, 0
        on_progress(config, 0, total)

    def add(self, count: int = 1) -> None:
        self._done += count
        self._report(self._config, self._done, self._total)


def _total(config: ConfigName, runs: Sequence[tuple[Ledger, RunFacts]], episodes: Callable[[], int]) -> int:
    if config in EPISODE_CONFIGS:
        return episodes()
    runs_kept = [facts for _, facts in runs if facts.evaluation is None]  # Evaluation records add no such rows
    return sum(len(facts.submissions) for facts in runs_kept) if config == "submissions" else len(runs_kept)


def write_configs(
    runs: Sequence[tuple[Ledger, RunFacts]],
    root: Path,
    options: ExportOptions,
    observation: ValueEncoding,
    action: ValueEncoding,
    *,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> list[tuple[ConfigReport, pa.Schema]]:
    """Write every requested config under ``root``; returns each config's report and schema.

    ``on_progress(config, done, total)`` follows each config as it is written (see the module docstring).
    """
    counted: list[int] = []

    def episodes() -> int:  # counted once, for the first Episode config, only when progress is asked for
        if not counted:
            counted.append(episode_count(runs, options.visibility))
        return counted[0]

    written = []
    for config in options.configs:
        progress = None if on_progress is None else _Progress(on_progress, config, _total(config, runs, episodes))
        written.append(_write_config(config, runs, root, options, observation, action, progress))
    return written
