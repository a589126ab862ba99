"""Where the shipped Policy Programs live: plain directories ``benchmarks/programs/<name>/`` holding a ``policy.py``.

A Program is data that the execution layer snapshots and runs, not a Python package. Each Benchmark factory says
which of them it ships (:func:`shipped`), so a Benchmark carries its own Programs
(:class:`~evoledger.kernel.authoring.BenchmarkPrograms`) and nothing looks them up by Benchmark name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from evoledger.kernel.authoring import BenchmarkPrograms

__all__ = ["PROGRAMS_DIR", "shipped"]

PROGRAMS_DIR: Final = Path(__file__).resolve().parent / "programs"


def shipped(
    family: str, *, tunable: str | None = None, heuristic: bool = True, baseline: str | None = None
) -> BenchmarkPrograms:
    """``<family>-baseline`` (or the shared ``baseline`` Program, when several Benchmarks share one),
    ``<family>-heuristic`` and, if given, the ``tunable`` Program."""
    return BenchmarkPrograms(
        baseline=PROGRAMS_DIR / (baseline or f"{family}-baseline"),
        tunable=None if tunable is None else PROGRAMS_DIR / tunable,
        heuristic=PROGRAMS_DIR / f"{family}-heuristic" if heuristic else None,
    )
