"""Program facts: a Program directory was captured as a snapshot (its manifest digest is its id)."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import Count, EventBase, ObjectDigest, ProgramPath
from evoledger.ledger.records import Visibility
from pydantic import model_validator
from pydantic_core import PydanticCustomError

__all__ = ["ProgramSnapshotted", "SnapshotSource"]

SnapshotSource = Literal["initial", "submission", "evaluation"]
"""Why the Program was captured: the Run's starting Program, a Submission, or a standalone Evaluation."""


class ProgramSnapshotted(EventBase):
    """Records a Program snapshot: its manifest Object digest (the Program id) and its files."""

    kind: Literal["program-snapshotted"] = "program-snapshotted"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "public"

    program_digest: ObjectDigest
    files: dict[ProgramPath, ObjectDigest]
    entry_point: ProgramPath
    file_count: Count
    total_bytes: Count
    source: SnapshotSource

    @model_validator(mode="after")
    def _check_files(self) -> Self:
        if self.entry_point not in self.files:
            raise PydanticCustomError(
                "entry_point", "entry point {ep!r} is not among the files", {"ep": self.entry_point}
            )
        if self.file_count != len(self.files):
            raise PydanticCustomError(
                "file_count",
                "file_count {n} does not match the {m} files listed",
                {"n": self.file_count, "m": len(self.files)},
            )
        return self
