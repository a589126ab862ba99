"""Packaged Programs: the baseline (and other starting) Programs shipped beside the Benchmarks.

They are plain directories under ``evoledger/benchmarks/programs/<name>/``, found by package-data
lookup (the kernel never imports a concrete Benchmark module to find them).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from evoledger.ledger.errors import UnknownNameError

__all__ = ["packaged_program", "packaged_programs"]

_PACKAGE = "evoledger.benchmarks"


def _root() -> Path:
    return Path(str(resources.files(_PACKAGE))) / "programs"


def packaged_programs() -> list[str]:
    """Names of all packaged Programs, e.g. ``cartpole-baseline``."""
    root = _root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "policy.py").is_file())


def packaged_program(name: str) -> Path:
    """The directory of packaged Program ``name`` (e.g. ``"cartpole-baseline"``)."""
    path = _root() / name
    if not (path / "policy.py").is_file():
        raise UnknownNameError("packaged program", name, packaged_programs())
    return path
