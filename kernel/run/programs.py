"""Materialized Program snapshots, cached per digest for execution (Host-only, under ``host/programs``)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from evoledger.ledger.snapshots import materialize_program

__all__ = ["ProgramCache"]


class _ObjectSource(Protocol):
    def get(self, digest: str) -> bytes: ...


class ProgramCache:
    """Executes exactly what was snapshotted: each Program digest is written out once, from the ledger."""

    def __init__(self, root: Path, objects: _ObjectSource) -> None:
        self._root = root
        self._objects = objects

    def materialize(self, program_digest: str) -> Path:
        """The directory holding Program ``program_digest`` (written from its Objects on first use)."""
        target = self._root / program_digest.removeprefix("sha256:")[:32]
        if not (target / "policy.py").is_file():
            self._root.mkdir(parents=True, exist_ok=True)
            materialize_program(program_digest, self._objects, target, overwrite=True)
        return target
