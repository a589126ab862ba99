"""The ``submissions`` config: one row per accepted Submission, with its outcome labels.

Each row holds what the Agent did (the Program's files and its diff against the previous Submission,
or against the initial Program for the first one; the Episodes it asked for), what the Host replied
(budget, score, Feedback content and Artifacts), and the labels post-training needs: whether it was a
Candidate, its Validation score, whether it was selected, its held-out Assessment score and the Run's
(``run_assessment_score``). ``selected`` and ``candidate`` are never null.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from evoledger.exporters.program_text import EMPTY_PROGRAM, ProgramText, program_diff, read_program
from evoledger.exporters.runs import RunFacts, SubmissionFacts, stored_events
from evoledger.exporters.schema import submissions_schema
from evoledger.exporters.selectors import format_episode_selector
from evoledger.ledger.errors import ObjectEvictedError
from evoledger.ledger.events import EpisodeFinished, from_stored
from evoledger.ledger.store import Ledger

__all__ = ["episode_counts", "program_of", "submission_batches"]


def episode_counts(ledger: Ledger, facts: RunFacts) -> dict[str, tuple[int, int]]:
    """Submission id -> (Episodes finished, Policy failures) over the Run's train Episodes."""
    counts: dict[str, tuple[int, int]] = {}
    for row in stored_events(ledger, facts.event_count, ("episode-finished",)):
        event = from_stored(row)
        if isinstance(event, EpisodeFinished) and event.submission_id is not None:
            done, failed = counts.get(event.submission_id, (0, 0))
            counts[event.submission_id] = (done + 1, failed + (event.status != "ok"))
    return counts


def program_of(ledger: Ledger, facts: RunFacts, program_digest: str | None) -> ProgramText:
    """The Program ``program_digest`` of the Run (empty when it was never snapshotted in this Run)."""
    if program_digest is None or program_digest not in facts.programs:
        return EMPTY_PROGRAM
    return read_program(ledger, program_digest, facts.programs[program_digest].files)


def _content(ledger: Ledger, digest: str) -> str | None:
    try:
        return ledger.objects.get(digest).decode("utf-8", errors="replace")
    except ObjectEvictedError:
        return None


def _row(
    ledger: Ledger,
    facts: RunFacts,
    sub: SubmissionFacts,
    program: ProgramText,
    previous: ProgramText,
    counts: tuple[int, int],
) -> dict[str, Any]:
    sid, accepted, feedback = sub.submission_id, sub.accepted, sub.feedback
    candidates = list(facts.finish.candidates) if facts.finish is not None else []
    selected = facts.selected == sid
    return {
        "run_id": facts.run_id,
        "benchmark": facts.benchmark_id,
        "submission_id": sid,
        "position": sub.position,
        "program_digest": accepted.program_digest,
        "program_files": program.rows(),
        "program_diff": program_diff(previous, program),
        "episodes": list(accepted.episodes),
        "episode_selector": format_episode_selector(accepted.episodes),
        "budget_before": accepted.budget_before,
        "budget_after": accepted.budget_after,
        "budget_used": feedback.budget_used if feedback is not None else None,
        "budget_left": feedback.budget_left if feedback is not None else None,
        "score": feedback.score if feedback is not None else None,
        "feedback_content": _content(ledger, feedback.content_digest) if feedback is not None else None,
        "feedback_artifacts": [a.model_dump(mode="json") for a in feedback.artifacts] if feedback is not None else [],
        "episodes_finished": counts[0],
        "policy_failures": counts[1],
        "candidate": sid in candidates,
        "finish_position": candidates.index(sid) + 1 if sid in candidates else None,
        "validation_score": facts.validation_score(sid),
        "selected": selected,
        "assessment_score": facts.assessment_score() if selected else None,
        "run_assessment_score": facts.assessment_score(),
        "run_end_reason": facts.ended.reason if facts.ended is not None else None,
    }


def submission_batches(ledger: Ledger, facts: RunFacts, *, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The Run's Submission rows in acceptance order, ``batch_rows`` at a time."""
    schema = submissions_schema()
    counts = episode_counts(ledger, facts)
    previous = program_of(ledger, facts, facts.initial_program)
    rows: list[dict[str, Any]] = []
    for sub in facts.submissions:
        program = program_of(ledger, facts, sub.accepted.program_digest)
        rows.append(_row(ledger, facts, sub, program, previous, counts.get(sub.submission_id, (0, 0))))
        previous = program
        if len(rows) >= batch_rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)
