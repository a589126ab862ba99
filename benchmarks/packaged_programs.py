"""The packaged Policy Programs: a weak baseline and a reasonable heuristic per gymnasium Benchmark.

Each Program is a plain directory ``benchmarks/programs/<name>/`` holding a ``policy.py`` that defines
``make_policy(context)`` (not a Python package: a Program is data that the execution layer snapshots and runs).
Baselines (``<family>-baseline``) act uniformly at random with ``context.policy_seed``; they are the Agent's
starting point. Heuristics (``<family>-heuristic``) are hand-written rules that beat the baselines clearly.

This module declares no ``BENCHMARKS``; it only locates the directories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from evoledger.ledger.errors import UnknownNameError

__all__ = [
    "PROGRAMS_DIR",
    "PROGRAM_FAMILY",
    "ProgramKind",
    "baseline_program",
    "heuristic_program",
    "packaged_program",
    "packaged_program_names",
]

PROGRAMS_DIR: Final = Path(__file__).resolve().parent / "programs"

ProgramKind = Literal["baseline", "heuristic"]

PROGRAM_FAMILY: Final[dict[str, str]] = {
    "cartpole": "cartpole",
    "acrobot": "acrobot",
    "mountain-car": "mountain-car",
    "mountain-car-continuous": "mountain-car-continuous",
    "pendulum": "pendulum",
    "blackjack": "blackjack",
    "cliff-walking": "cliff-walking",
    "frozen-lake": "frozen-lake",
    "frozen-lake-8x8": "frozen-lake",
    "taxi": "taxi",
}
"""Which Program family serves each Benchmark (the FrozenLake Programs read the map, so they serve both sizes)."""


def packaged_program_names() -> list[str]:
    """Names of all packaged Programs (directories with a ``policy.py``), sorted."""
    if not PROGRAMS_DIR.is_dir():
        return []
    return sorted(p.name for p in PROGRAMS_DIR.iterdir() if (p / "policy.py").is_file())


def packaged_program(name: str) -> Path:
    """The directory of the packaged Program ``name``, e.g. ``"cartpole-heuristic"``."""
    names = packaged_program_names()
    if name not in names:
        raise UnknownNameError("packaged program", name, names)
    return PROGRAMS_DIR / name


def _program_for(benchmark: str, kind: ProgramKind) -> Path:
    if benchmark not in PROGRAM_FAMILY:
        raise UnknownNameError("benchmark with packaged programs", benchmark, PROGRAM_FAMILY)
    return packaged_program(f"{PROGRAM_FAMILY[benchmark]}-{kind}")


def baseline_program(benchmark: str) -> Path:
    """The weak baseline Program directory for the Benchmark registered as ``benchmark``."""
    return _program_for(benchmark, "baseline")


def heuristic_program(benchmark: str) -> Path:
    """The heuristic Program directory for the Benchmark registered as ``benchmark``."""
    return _program_for(benchmark, "heuristic")
