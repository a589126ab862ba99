"""Episode records for a Benchmark's ``feedback()``, rebuilt from the log (never from process memory).

Feedback is always computed from what the ledger holds, so a Run resumed after a crash publishes the
same Feedback as an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from evoledger.kernel.authoring import EpisodeRecord, EpisodeSpec, Split
from evoledger.ledger.trajectories import decode_trajectory
from evoledger.projections.run_state import EpisodeView

__all__ = ["TRACE_RECORDS", "records_from_views"]

TRACE_RECORDS = 5
"""How many Episodes hand their full trajectory to ``feedback()`` (for trace Artifacts)."""


class _ObjectSource(Protocol):
    def get(self, digest: str) -> bytes: ...


def records_from_views(
    split: Split,
    views: Iterable[tuple[int, EpisodeView]],
    objects: _ObjectSource,
    *,
    traces: int = TRACE_RECORDS,
    specs: Mapping[int, EpisodeSpec] | None = None,
) -> list[EpisodeRecord]:
    """Records in the given order; the first ``traces`` carry their decoded trajectories.

    ``specs`` (pool index to Host-private spec) are attached to the records that carry a trajectory, so that a
    Benchmark can re-simulate them (rendered frames for training Feedback); without it no record has one.
    """
    records = []
    for position, (index, view) in enumerate(views):
        trajectory = None
        episode = None
        if position < traces and view.trajectory_digest is not None:
            trajectory = decode_trajectory(objects.get(view.trajectory_digest))
            episode = None if specs is None else specs.get(index)
        records.append(
            EpisodeRecord(
                split=split,
                index=index,
                status=view.status,
                episode_return=view.episode_return,
                steps=view.steps,
                terminated=view.terminated,
                truncated=view.truncated,
                metrics=dict(view.metrics),
                failure_message=view.failure_message,
                trajectory=trajectory,
                episode=episode,
            )
        )
    return records
