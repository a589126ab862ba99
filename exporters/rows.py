"""Streaming row builders for the ``steps`` and ``episodes`` configs.

Both stream the Run's Episode Events in log order and yield ``(split, RecordBatch)`` pairs of bounded
size; nothing is kept per Episode once its batch is built, so memory stays flat however long the Run.
Which Episodes are included depends on the visibility: ``public`` keeps the Submissions' own train
Episodes (what the Agent saw); ``all`` adds the host-only Validation and Assessment Episodes. An
Evaluation record's Episodes (``evoledger evaluate --record-to``) are all exported under either
visibility, in the split they were evaluated on: their plan derives from a public seed, and no Agent
is kept from them. Every row carries the Episode's globally unique ``episode_id`` (``exporters.runs``).

Step rows are assembled column-wise: an Episode contributes a few numpy arrays (observations,
actions, rewards), and a batch is built once per ``batch_rows`` rows, so per-step Python work is
avoided for typed spaces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from evoledger.exporters.options import Visibility
from evoledger.exporters.runs import RunFacts, episode_id, stored_events
from evoledger.exporters.schema import episodes_schema, steps_schema
from evoledger.exporters.spaces import (
    ColumnChunk,
    ValueEncoding,
    chunk_rows,
    concat_chunks,
    encode_values,
    pad_chunk,
    slice_chunk,
    to_arrow,
)
from evoledger.exporters.trajectories import load_trajectory
from evoledger.ledger.errors import SchemaError
from evoledger.ledger.events import AssessmentFinished, EpisodeFinished, ValidationEpisodeFinished, from_stored
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory

__all__ = ["EpisodeRef", "StepBatcher", "episode_batches", "episode_count", "episode_refs", "step_batches"]


@dataclass(frozen=True, slots=True)
class EpisodeRef:
    """One finished Episode as the log describes it (``terminated``/``truncated`` unknown for Assessment)."""

    episode_id: str
    submission_id: str | None
    """``None`` for an Episode of an Evaluation record."""
    split: str
    index: int
    attempt: int
    program_digest: str
    status: str
    failure_message: str | None
    episode_return: float
    steps: int
    terminated: bool | None
    truncated: bool | None
    trajectory_digest: str

    @property
    def policy_failure(self) -> str | None:
        return None if self.status == "ok" else self.status

    def where(self, run_id: str) -> str:
        if self.submission_id is None:
            return f"evaluation record {run_id}, {self.split} Episode {self.index}"
        return f"Run {run_id}, {self.split} Episode {self.index} of {self.submission_id}"


def _episode_kinds(visibility: Visibility) -> tuple[str, ...]:
    if visibility == "public":
        return ("episode-finished",)
    return ("episode-finished", "validation-episode-finished", "assessment-finished")


def episode_refs(ledger: Ledger, facts: RunFacts, visibility: Visibility) -> Iterator[EpisodeRef]:
    """The Run's finished Episodes allowed by ``visibility``, in log order."""
    programs = {s.submission_id: s.accepted.program_digest for s in facts.submissions}
    evaluation = facts.evaluation
    record = facts.run_id
    for row in stored_events(ledger, facts.event_count, _episode_kinds(visibility)):
        event = from_stored(row)
        if isinstance(event, EpisodeFinished | ValidationEpisodeFinished):
            sid = event.submission_id
            if isinstance(event, ValidationEpisodeFinished):
                program = event.program_digest
            elif sid is not None and sid in programs:
                program = programs[sid]
            elif sid is None and evaluation is not None and event.evaluation_id == evaluation.evaluation_id:
                program = evaluation.program_digest
            else:
                continue  # not an Episode of this Run's Submissions or of this Evaluation
            yield EpisodeRef(
                episode_id=episode_id(record, event.split, sid, event.index, event.attempt, row.hash),
                submission_id=sid,
                split=event.split,
                index=event.index,
                attempt=event.attempt,
                program_digest=program,
                status=event.status,
                failure_message=event.failure.message if event.failure is not None else None,
                episode_return=event.episode_return,
                steps=event.steps,
                terminated=event.terminated,
                truncated=event.truncated,
                trajectory_digest=event.trajectory_digest,
            )
        elif isinstance(event, AssessmentFinished):
            for summary in event.episodes:
                yield EpisodeRef(
                    episode_id=episode_id(record, "assessment", event.submission_id, summary.index, 1, row.hash),
                    submission_id=event.submission_id,
                    split="assessment",
                    index=summary.index,
                    attempt=1,
                    program_digest=event.program_digest,
                    status=summary.status,
                    failure_message=None,
                    episode_return=summary.episode_return,
                    steps=summary.steps,
                    terminated=None,
                    truncated=None,
                    trajectory_digest=summary.trajectory_digest,
                )


def episode_count(runs: Sequence[tuple[Ledger, RunFacts]], visibility: Visibility) -> int:
    """How many Episodes :func:`episode_refs` yields over ``runs`` (a pass over their Episode Events, no trajectory)."""
    return sum(sum(1 for _ in episode_refs(ledger, facts, visibility)) for ledger, facts in runs)


class StepBatcher:
    """Collects the steps of whole Episodes column-wise and builds record batches of ``batch_rows``+ rows."""

    def __init__(self, observation: ValueEncoding, action: ValueEncoding, *, batch_rows: int) -> None:
        self.schema = steps_schema(observation, action)
        self._obs_enc = observation
        self._act_enc = action
        self._batch_rows = batch_rows
        self._reset()

    def _reset(self) -> None:
        self.rows = 0
        self._labels: list[tuple[str, str, str | None, str, str | None]] = []
        self._indices: list[int] = []
        self._counts: list[int] = []
        self._ends: list[tuple[bool, bool]] = []
        self._obs: list[ColumnChunk] = []
        self._next: list[ColumnChunk] = []
        self._next_null: list[int] = []
        self._actions: list[ColumnChunk] = []
        self._rewards: list[np.ndarray[Any, Any]] = []

    def add(self, run_id: str, ref: EpisodeRef, trajectory: Trajectory) -> pa.RecordBatch | None:
        """Add one Episode's steps; returns a batch once ``batch_rows`` rows are buffered."""
        steps = len(trajectory.actions)
        observations = trajectory.observations
        if steps == 0:
            return None
        if len(observations) < steps:
            raise SchemaError(
                f"{ref.where(run_id)}: its trajectory has {len(observations)} observations for {steps} actions"
            )
        try:
            obs = encode_values(observations[: steps + 1], self._obs_enc)
            actions = encode_values(trajectory.actions, self._act_enc)
            rewards = np.asarray(trajectory.rewards, dtype=np.float64)
        except (SchemaError, ValueError, TypeError) as exc:
            raise SchemaError(
                f"{ref.where(run_id)}: {exc}; export with --json-spaces to store such "
                "observations and actions as JSON text"
            ) from None
        following = slice_chunk(obs, 1, steps + 1)
        if chunk_rows(obs) == steps:  # the Episode ended without a final observation
            self._next_null.append(self.rows + steps - 1)
            following = pad_chunk(following)
        self._labels.append((run_id, ref.episode_id, ref.submission_id, ref.split, ref.policy_failure))
        self._indices.append(ref.index)
        self._counts.append(steps)
        self._ends.append((trajectory.terminated, trajectory.truncated))
        self._obs.append(slice_chunk(obs, 0, steps))
        self._next.append(following)
        self._actions.append(actions)
        self._rewards.append(rewards)
        self.rows += steps
        return self.flush() if self.rows >= self._batch_rows else None

    def flush(self) -> pa.RecordBatch | None:
        """The buffered rows as one batch (``None`` when empty)."""
        if self.rows == 0:
            return None
        rows = self.rows
        counts = np.asarray(self._counts, dtype=np.int64)
        starts = np.cumsum(counts) - counts
        codes = pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), counts))

        def label(position: int) -> pa.Array:
            return pa.array([item[position] for item in self._labels], type=pa.string()).take(codes)

        ends = starts + counts - 1
        terminated = np.zeros(rows, dtype=bool)
        truncated = np.zeros(rows, dtype=bool)
        terminated[ends] = [t for t, _ in self._ends]
        truncated[ends] = [t for _, t in self._ends]
        null_next = None
        if self._next_null:
            null_next = np.zeros(rows, dtype=bool)
            null_next[self._next_null] = True
        next_chunk = concat_chunks(self._next)
        arrays = [
            label(0),
            label(1),
            label(2),
            label(3),
            pa.array(np.repeat(np.asarray(self._indices, dtype=np.int32), counts)),
            pa.array((np.arange(rows, dtype=np.int64) - np.repeat(starts, counts)).astype(np.int32)),
            to_arrow(concat_chunks(self._obs), self._obs_enc),
            to_arrow(concat_chunks(self._actions), self._act_enc),
            pa.array(np.concatenate(self._rewards)),
            to_arrow(next_chunk, self._obs_enc, mask=null_next),
            pa.array(terminated),
            pa.array(truncated),
            label(4),
        ]
        self._reset()
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def step_batches(
    ledger: Ledger,
    facts: RunFacts,
    observation: ValueEncoding,
    action: ValueEncoding,
    *,
    visibility: Visibility,
    batch_rows: int,
    on_episode: Callable[[], None] | None = None,
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The Run's step rows as ``(split, batch)`` pairs, in log order within each split.

    ``on_episode`` is called once per Episode, after its steps joined a batch.
    """
    batchers: dict[str, StepBatcher] = {}
    for ref in episode_refs(ledger, facts, visibility):
        batcher = batchers.get(ref.split)
        if batcher is None:
            batcher = batchers[ref.split] = StepBatcher(observation, action, batch_rows=batch_rows)
        trajectory = load_trajectory(ledger, ref.trajectory_digest, ref.where(facts.run_id))
        batch = batcher.add(facts.run_id, ref, trajectory)
        if on_episode is not None:
            on_episode()
        if batch is not None:
            yield ref.split, batch
    for split, batcher in batchers.items():
        batch = batcher.flush()
        if batch is not None:
            yield split, batch


def _episode_row(ledger: Ledger, facts: RunFacts, ref: EpisodeRef) -> dict[str, Any]:
    terminated, truncated = ref.terminated, ref.truncated
    if terminated is None or truncated is None:  # Assessment summaries do not say; the trajectory does
        trajectory = load_trajectory(ledger, ref.trajectory_digest, ref.where(facts.run_id))
        terminated, truncated = trajectory.terminated, trajectory.truncated
    return {
        "run_id": facts.run_id,
        "episode_id": ref.episode_id,
        "benchmark": facts.benchmark_id,
        "submission_id": ref.submission_id,
        "split": ref.split,
        "episode_index": ref.index,
        "attempt": ref.attempt,
        "program_digest": ref.program_digest,
        "status": ref.status,
        "policy_failure": ref.policy_failure,
        "failure_message": ref.failure_message,
        "episode_return": ref.episode_return,
        "steps": ref.steps,
        "terminated": terminated,
        "truncated": truncated,
        "trajectory_digest": ref.trajectory_digest,
    }


def episode_batches(
    ledger: Ledger,
    facts: RunFacts,
    *,
    visibility: Visibility,
    batch_rows: int,
    on_episode: Callable[[], None] | None = None,
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The Run's Episode rows as ``(split, batch)`` pairs, in log order within each split.

    ``on_episode`` is called once per Episode, after its row joined a batch.
    """
    schema = episodes_schema()
    pending: dict[str, list[dict[str, Any]]] = {}
    for ref in episode_refs(ledger, facts, visibility):
        rows = pending.setdefault(ref.split, [])
        rows.append(_episode_row(ledger, facts, ref))
        if on_episode is not None:
            on_episode()
        if len(rows) >= batch_rows:
            yield ref.split, pa.RecordBatch.from_pylist(rows, schema=schema)
            pending[ref.split] = []
    for split, rows in pending.items():
        if rows:
            yield split, pa.RecordBatch.from_pylist(rows, schema=schema)
