"""Episode selectors as the Agent writes them (``0:2,4:7,9``), rebuilt from a Submission's pool indices.

The kernel's session layer owns the selector grammar; exporters may not import it (layering), so
this is the small formatting half, kept identical to ``kernel.session.selectors.format_selector``
for the strictly increasing indices a ``submission-accepted`` Event holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from evoledger.ledger.errors import InputError

__all__ = ["format_episode_selector"]


def format_episode_selector(indices: Iterable[int]) -> str:
    """The normalized selector for strictly increasing indices: ``[0, 1, 4, 5, 6, 9]`` -> ``"0:2,4:7,9"``."""
    runs: list[list[int]] = []
    previous = -1
    for value in indices:
        if value <= previous:
            raise InputError(f"episode indices must be strictly increasing; {value} follows {previous}")
        if runs and value == previous + 1:
            runs[-1][1] = value + 1
        else:
            runs.append([value, value + 1])
        previous = value
    if not runs:
        raise InputError("an episode selector selects at least one Episode; got no indices")
    return ",".join(str(start) if stop == start + 1 else f"{start}:{stop}" for start, stop in runs)
