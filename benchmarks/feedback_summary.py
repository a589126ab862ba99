"""Feedback for episodic Benchmarks: what an Agent needs to improve its Policy, and nothing Host-private.

:func:`summarize_episodes` turns the :class:`~evoledger.kernel.authoring.EpisodeRecord` s of one Evaluation into
:class:`~evoledger.kernel.authoring.Feedback`:

* ``content`` (compact, kept forever): a one-line ``summary``, the ``score`` and the rule it follows,
  ``status_counts`` (``ok``, each Policy failure code, ``infra_fault``), ``outcome_counts`` (Benchmark words
  such as ``pole_fell`` / ``survived``), ``returns`` and ``steps`` statistics over Episodes that ran to the end,
  Benchmark-specific ``notes`` statistics, ``per_episode`` summaries keyed by pool index (bounded), and the tail of
  the first few failure messages;
* ``episodes.csv`` (permanent): one row per Episode, for analysis;
* ``trace.jsonl`` (bulk): the steps of the first few Episodes that carry a trajectory, one JSON object per line
  (``episode`` = pool index, ``record`` = position in this Evaluation, ``step``, ``observation``, ``action``,
  ``reward``, ``metrics``; a last line per Episode holds the final observation with ``terminated`` /
  ``truncated``). Large values are summarised, so the trace stays small whatever the observations are: an array
  (or nested list) of more than :data:`TRACE_ARRAY_ELEMENTS` numbers becomes ``{"shape", "dtype", "mean", "min",
  "max"}`` (an image: its shape, dtype and mean, not 27,648 numbers), a string longer than :data:`TRACE_TEXT_CHARS`
  is cut, dicts and tuples are summarised part by part, a line longer than :data:`MAX_TRACE_LINE_BYTES` keeps only
  its step fields, and the whole trace stops at :data:`MAX_TRACE_BYTES` (the last line of each Episode still says
  how it ended and how many steps were left out).

EpisodeRecords carry pool indices only, never seeds or scenarios, so none can reach the Feedback.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from evoledger.kernel.authoring import Artifact, EpisodeRecord, Feedback, ScoreRule, score_episodes

__all__ = [
    "MAX_FAILURE_CHARS",
    "MAX_PER_EPISODE",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_LINE_BYTES",
    "SCORE_DIGITS",
    "TRACE_ARRAY_ELEMENTS",
    "TRACE_EPISODES",
    "TRACE_TEXT_CHARS",
    "mean_return_rule",
    "summarize_episodes",
]

MAX_PER_EPISODE: Final = 200
"""At most this many ``per_episode`` entries in the content (``episodes.csv`` has them all)."""
TRACE_EPISODES: Final = 3
"""How many Episodes ``trace.jsonl`` covers."""
MAX_TRACE_STEPS: Final = 2_000
"""Steps per Episode kept in the trace."""
MAX_TRACE_BYTES: Final = 4 * 1024 * 1024
"""The trace stops adding steps once it holds this many bytes."""
MAX_TRACE_LINE_BYTES: Final = 32 * 1024
"""A trace line longer than this keeps its step fields but not its observation and action."""
TRACE_ARRAY_ELEMENTS: Final = 512
"""Arrays (and nested lists) of more numbers than this are summarised in the trace, not listed: an image is, a
state vector (even MuJoCo Humanoid's 348 numbers) or a 7x7x3 MiniGrid view is listed."""
TRACE_TEXT_CHARS: Final = 500
"""Strings (a language mission) longer than this are cut in the trace."""
MAX_FAILURES_SHOWN: Final = 5
MAX_FAILURE_CHARS: Final = 2_000
"""Failure messages (tracebacks) are cut to their last this-many characters: the end says the most."""
SCORE_DIGITS: Final = 6
"""Scores are rounded to this many decimals."""


def mean_return_rule(failure_return: float) -> ScoreRule:
    """The declared scoring rule of these Benchmarks: mean return, failed Episodes count ``failure_return``."""
    return ScoreRule(failure_return=failure_return, digits=SCORE_DIGITS)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__} in a trace")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, default=_json_default)


def _round(value: float) -> float:
    return float(round(value, SCORE_DIGITS))


def _stats(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    array = np.asarray(values, dtype=np.float64)
    return {
        "mean": _round(float(array.mean())),
        "min": _round(float(array.min())),
        "max": _round(float(array.max())),
        "std": _round(float(array.std())),
    }


def _tail(message: str) -> str:
    return message if len(message) <= MAX_FAILURE_CHARS else "..." + message[-MAX_FAILURE_CHARS:]


def _number(value: Any) -> float | None:
    number = float(value)
    return _round(number) if math.isfinite(number) else None


def _array_summary(array: np.ndarray[Any, Any]) -> dict[str, Any]:
    """An array too large to list: its shape, dtype and statistics (``None`` for a non-finite one)."""
    summary: dict[str, Any] = {"shape": list(array.shape), "dtype": str(array.dtype)}
    if array.size and array.dtype.kind in "biuf":
        summary.update(mean=_number(array.mean()), min=_number(array.min()), max=_number(array.max()))
    return summary


def _list_shape(value: list[Any]) -> list[int]:
    """The shape a nested list would have, read along its first elements (cheap: no element is visited twice)."""
    shape: list[int] = []
    part: Any = value
    while isinstance(part, list) and len(shape) <= 32:
        shape.append(len(part))
        part = part[0] if part else None
    return shape


def _traced(value: Any, depth: int = 0) -> Any:
    """``value`` as the trace shows it: small values as they are, large arrays, lists and strings summarised."""
    if isinstance(value, np.ndarray):
        if value.size > TRACE_ARRAY_ELEMENTS:
            return _array_summary(value)
        return [_traced(v, depth + 1) for v in value.tolist()] if value.ndim else _traced(value.item(), depth)
    if isinstance(value, np.generic):
        return _traced(value.item(), depth)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value if len(value) <= TRACE_TEXT_CHARS else value[:TRACE_TEXT_CHARS] + f"... ({len(value)} characters)"
    if depth > 32:
        return "..."
    if isinstance(value, list | tuple):
        if len(value) > TRACE_ARRAY_ELEMENTS or (value and isinstance(value[0], list)):
            shape = _list_shape(list(value))
            if math.prod(shape) > TRACE_ARRAY_ELEMENTS:
                try:
                    array = np.asarray(value)
                except (TypeError, ValueError):  # ragged: describe its length only
                    return {"length": len(value)}
                if array.dtype.kind in "biuf":
                    return _array_summary(array)
                return {"length": len(value)}
        return [_traced(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _traced(v, depth + 1) for k, v in value.items()}
    return value


def _line(fields: dict[str, Any]) -> str:
    line = _dumps(fields)
    if len(line) > MAX_TRACE_LINE_BYTES:  # e.g. a dict of many parts: keep the step, say what was left out
        fields = {k: v for k, v in fields.items() if k not in ("observation", "action")}
        fields["omitted"] = f"observation and action take {len(line)} bytes here"
        line = _dumps(fields)
    return line


def _trace(records: Sequence[EpisodeRecord]) -> bytes:
    lines: list[str] = []
    size = 0
    traced = 0
    for position, record in enumerate(records):
        trajectory = record.trajectory
        if trajectory is None:
            continue
        if traced == TRACE_EPISODES or size >= MAX_TRACE_BYTES:
            break
        traced += 1
        metrics = list(trajectory.metrics) or [{} for _ in trajectory.actions]
        limit = min(trajectory.steps, MAX_TRACE_STEPS)
        steps = 0
        while steps < limit and size < MAX_TRACE_BYTES:
            t = steps
            line = _line(
                {
                    "episode": record.index,
                    "record": position,
                    "step": t,
                    "observation": _traced(trajectory.observations[t]) if t < len(trajectory.observations) else None,
                    "action": _traced(trajectory.actions[t]),
                    "reward": trajectory.rewards[t],
                    "metrics": dict(metrics[t]) if t < len(metrics) else {},
                }
            )
            lines.append(line)
            size += len(line) + 1
            steps += 1
        final = _traced(trajectory.observations[steps]) if steps < len(trajectory.observations) else None
        line = _line(
            {
                "episode": record.index,
                "record": position,
                "step": steps,
                "observation": final,
                "terminated": trajectory.terminated,
                "truncated": trajectory.truncated,
                "status": record.status,
                "steps_omitted": trajectory.steps - steps,
            }
        )
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def _csv(rows: Sequence[Mapping[str, Any]], note_keys: Sequence[str]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["index", "status", "outcome", "return", "steps", "terminated", "truncated", *note_keys])
    for row in rows:
        notes = row.get("notes", {})
        writer.writerow(
            [
                row["index"],
                row["status"],
                row.get("outcome", ""),
                row["return"],
                row["steps"],
                row["terminated"],
                row["truncated"],
                *(notes.get(k, "") for k in note_keys),
            ]
        )
    return buffer.getvalue().encode("utf-8")


def _format(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def summarize_episodes(
    *,
    benchmark_id: str,
    primary_metric: str,
    score_rule: str,
    failure_return: float,
    records: Sequence[EpisodeRecord],
    outcome: Callable[[EpisodeRecord], str],
    notes: Callable[[EpisodeRecord], Mapping[str, float]],
) -> Feedback:
    """Feedback for ``records`` (see the module docstring for its layout)."""
    status_counts: Counter[str] = Counter({"ok": 0})
    outcome_counts: Counter[str] = Counter()
    ok_returns: list[float] = []
    ok_steps: list[float] = []
    note_values: dict[str, list[float]] = {}
    rows: list[dict[str, Any]] = []
    failures: dict[str, str] = {}
    for record in records:
        status_counts[record.status] += 1
        row: dict[str, Any] = {
            "index": record.index,
            "status": record.status,
            "return": _round(float(record.episode_return)),
            "steps": record.steps,
            "terminated": record.terminated,
            "truncated": record.truncated,
        }
        if record.status == "ok":
            label = outcome(record)
            outcome_counts[label] += 1
            ok_returns.append(float(record.episode_return))
            ok_steps.append(float(record.steps))
            row["outcome"] = label
            episode_notes = {k: _round(float(v)) for k, v in notes(record).items() if math.isfinite(float(v))}
            if episode_notes:
                row["notes"] = episode_notes
                for key, value in episode_notes.items():
                    note_values.setdefault(key, []).append(value)
        elif record.failed and record.failure_message and len(failures) < MAX_FAILURES_SHOWN:
            failures.setdefault(str(record.index), _tail(record.failure_message))
        rows.append(row)

    score = score_episodes(mean_return_rule(failure_return), ((r.status, r.episode_return) for r in records))
    policy_failures = sum(n for code, n in status_counts.items() if code not in ("ok", "infra_fault"))
    per_episode: dict[str, dict[str, Any]] = {}
    for row in rows[:MAX_PER_EPISODE]:
        key = str(row["index"])
        suffix = 2
        while key in per_episode:  # the same pool index used twice in one Evaluation
            key, suffix = f"{row['index']}#{suffix}", suffix + 1
        per_episode[key] = {k: v for k, v in row.items() if k != "index"}
    return_stats = _stats(ok_returns)
    outcome_text = ", ".join(f"{k} {v}" for k, v in sorted(outcome_counts.items())) or "none ran to the end"
    status_text = ", ".join(f"{k} {v}" for k, v in sorted(status_counts.items()))
    summary = (
        f"{benchmark_id}: {primary_metric} {_format(score)} over {len(records)} Episodes ({score_rule}); "
        f"status: {status_text}; outcomes: {outcome_text}; "
        f"return mean {_format(return_stats['mean'] if return_stats else None)}"
        f" min {_format(return_stats['min'] if return_stats else None)}"
        f" max {_format(return_stats['max'] if return_stats else None)}"
    )
    content: dict[str, Any] = {
        "summary": summary,
        "benchmark": benchmark_id,
        "score": score,
        "primary_metric": primary_metric,
        "score_rule": score_rule,
        "episodes": len(records),
        "status_counts": dict(sorted(status_counts.items())),
        "policy_failures": policy_failures,
        "infra_faults": status_counts.get("infra_fault", 0),
        "outcome_counts": dict(sorted(outcome_counts.items())),
        "returns": return_stats,
        "steps": _stats(ok_steps),
        "notes": {k: _stats(v) for k, v in sorted(note_values.items())},
        "per_episode": per_episode,
        "per_episode_truncated": len(rows) > MAX_PER_EPISODE,
        "failure_messages": failures,
    }
    artifacts = [
        Artifact(
            name="episodes.csv",
            media_type="text/csv",
            data=_csv(rows, sorted(note_values)),
            retention="permanent",
        )
    ]
    trace = _trace(records)
    if trace:
        artifacts.append(Artifact(name="trace.jsonl", media_type="application/x-ndjson", data=trace, retention="bulk"))
    return Feedback(score=score, content=content, artifacts=tuple(artifacts))
