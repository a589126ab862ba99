"""What an export wrote: per config and split, per source Run, and how fast."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConfigReport", "ExportReport", "RunReport", "SplitReport"]


@dataclass(frozen=True, slots=True)
class SplitReport:
    """One split of one config: its rows and files (paths relative to the dataset directory)."""

    split: str
    rows: int
    files: tuple[str, ...]
    arrow_bytes: int
    file_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "rows": self.rows,
            "files": list(self.files),
            "arrow_bytes": self.arrow_bytes,
            "file_bytes": self.file_bytes,
        }


@dataclass(frozen=True, slots=True)
class ConfigReport:
    """One dataset config (``steps``, ``episodes``, ``submissions``, ``messages``)."""

    name: str
    splits: tuple[SplitReport, ...]

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.splits)

    def split(self, name: str) -> SplitReport | None:
        """The split ``name``, if this config has it."""
        return next((s for s in self.splits if s.split == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rows": self.rows, "splits": [s.to_dict() for s in self.splits]}


@dataclass(frozen=True, slots=True)
class RunReport:
    """One source Run, identified by its head hash."""

    run_id: str
    path: str
    head_hash: str
    events: int
    format_version: int | None
    """The Run's ledger format version (``None`` for an Evaluation record, which does not record one)."""
    benchmark: str
    benchmark_params_hash: str
    created_by: str
    end_reason: str | None
    selected: str | None
    assessment_score: float | None
    submissions: int
    signer: str | None = None
    """The fingerprint in the Run's ``ledger.sig`` (or named by ``run-created``); ``None``: unsigned."""
    signature: str = "unsigned"
    """The signature verdict on the exported head: ``signed``, ``unsigned`` or ``invalid`` (see ``ledger.signing``)."""
    record: str = "run"
    """``run`` (written by ``evoledger run``) or ``evaluation`` (``evoledger evaluate --record-to``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "record": self.record,
            "path": self.path,
            "head_hash": self.head_hash,
            "events": self.events,
            "format_version": self.format_version,
            "benchmark": self.benchmark,
            "benchmark_params_hash": self.benchmark_params_hash,
            "created_by": self.created_by,
            "end_reason": self.end_reason,
            "selected": self.selected,
            "assessment_score": self.assessment_score,
            "submissions": self.submissions,
            "signer": self.signer,
            "signature": self.signature,
        }


@dataclass(frozen=True, slots=True)
class ExportReport:
    """The result of :func:`~evoledger.exporters.dataset.export_dataset`."""

    out: Path
    output_format: str
    visibility: str
    reward: str
    configs: tuple[ConfigReport, ...]
    runs: tuple[RunReport, ...]
    observation_encoding: str
    action_encoding: str
    steps: int
    """Step rows written (the ``steps`` config, or the Minari dataset's steps)."""
    episodes: int | None
    """Episode rows written (the ``episodes`` config or the Minari dataset; ``None`` when neither was written)."""
    seconds: float
    minari_dataset_id: str | None = None

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0

    def config(self, name: str) -> ConfigReport | None:
        """The report of config ``name``, if it was written."""
        return next((c for c in self.configs if c.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "format": self.output_format,
            "visibility": self.visibility,
            "reward": self.reward,
            "configs": [c.to_dict() for c in self.configs],
            "runs": [r.to_dict() for r in self.runs],
            "observation_encoding": self.observation_encoding,
            "action_encoding": self.action_encoding,
            "steps": self.steps,
            "episodes": self.episodes,
            "seconds": round(self.seconds, 6),
            "steps_per_second": round(self.steps_per_second, 1),
            "minari_dataset_id": self.minari_dataset_id,
        }
