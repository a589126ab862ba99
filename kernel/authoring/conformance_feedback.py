"""Conformance of a Benchmark's Feedback: well-formed, deterministic, and free of Host-private values.

:func:`check_feedback` builds synthetic :class:`EpisodeRecord` s from the checker's random Episodes (all ok; a mix
of ok, Policy failures and infra faults; infra faults only), calls ``feedback()`` on each, and searches the
canonical JSON of the content and every Artifact's bytes for the decimal digits of each Host seed handed out and
for each scenario (its canonical JSON and its distinctive leaves).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from evoledger.kernel.authoring.conformance_probes import jsonable
from evoledger.kernel.authoring.conformance_report import Findings
from evoledger.kernel.authoring.conformance_runs import Rollout
from evoledger.kernel.authoring.feedback import Artifact, EpisodeRecord, EpisodeStatus, Feedback, Trajectory
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError
from evoledger.projections.scoring import ScoreRule, score_episodes

__all__ = ["MIN_SECRET_DIGITS", "check_feedback", "synthetic_record"]

MIN_SECRET_DIGITS: Final = 6
"""Seeds (and integer scenario leaves) with fewer digits are not searched for: they would match by chance."""
MIN_SECRET_CHARS: Final = 8
"""String scenario leaves shorter than this are not searched for."""

_MIXED: Final[tuple[EpisodeStatus, ...]] = ("ok", "exception", "infra_fault", "timeout", "invalid_action")


def synthetic_record(run: Rollout, status: EpisodeStatus) -> EpisodeRecord:
    """An EpisodeRecord for ``run`` as the Host would write it with ``status`` (metrics summed over steps)."""
    totals: dict[str, float] = {}
    for metrics in run.metrics:
        for key, value in metrics.items():
            totals[key] = totals.get(key, 0.0) + value
    trajectory = Trajectory(
        observations=run.observations,
        actions=[jsonable(a) for a in run.sent_actions],
        rewards=run.rewards,
        terminated=run.terminated,
        truncated=run.truncated,
        metrics=run.metrics,
    )
    return EpisodeRecord(
        split=run.episode.split,
        index=run.episode.index,
        status=status,
        episode_return=float(sum(run.rewards)),
        steps=len(run.sent_actions),
        terminated=run.terminated,
        truncated=run.truncated,
        metrics=totals,
        failure_message=None if status == "ok" else f"Traceback (most recent call last):\n  synthetic {status}",
        trajectory=None if status == "infra_fault" else trajectory,
    )


def _needles(seeds: set[int], scenarios: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, str]]:
    for seed in sorted(seeds):
        if len(str(seed)) >= MIN_SECRET_DIGITS:
            yield "feedback.leaks_seed", str(seed)
    for scenario in scenarios:
        yield "feedback.leaks_scenario", canonical_json(dict(scenario)).decode("utf-8")
        stack: list[Any] = list(scenario.values())
        while stack:
            leaf = stack.pop()
            if isinstance(leaf, Mapping):
                stack.extend(leaf.values())
            elif isinstance(leaf, list | tuple):
                stack.extend(leaf)
            elif isinstance(leaf, str) and len(leaf) >= MIN_SECRET_CHARS:
                yield "feedback.leaks_scenario", leaf
            elif isinstance(leaf, int) and not isinstance(leaf, bool) and len(str(abs(leaf))) >= MIN_SECRET_DIGITS:
                yield "feedback.leaks_scenario", str(leaf)


def _published_bytes(
    benchmark: Any, findings: Findings, records: list[EpisodeRecord], label: str, *, check_score: bool = True
) -> list[bytes] | None:
    feedback = findings.guarded("feedback.failed", f"feedback() on {label}", lambda: benchmark.feedback(records))
    if feedback is None:
        return None
    if not isinstance(feedback, Feedback) or not all(isinstance(a, Artifact) for a in feedback.artifacts):
        findings.add(
            "feedback.invalid",
            f"feedback() on {label} returned {type(feedback).__name__}; return Feedback with Artifact items",
        )
        return None
    try:
        content = canonical_json(dict(feedback.content))
    except (EncodingError, TypeError, ValueError) as exc:
        findings.add("feedback.invalid", f"feedback content on {label} is not JSON: {exc}")
        return None
    rule = getattr(getattr(benchmark, "spec", None), "scoring", None)
    rule = rule if isinstance(rule, ScoreRule) else None
    declared = score_episodes(rule, ((r.status, r.episode_return) for r in records)) if rule is not None else None
    if rule is not None and feedback.score != declared and check_score:
        findings.add(
            "feedback.score_rule",
            f"feedback() on {label} scores {feedback.score!r} but the spec's scoring rule ({rule.describe()}) gives "
            f"{declared!r}: the Host records the rule's score, so compute it with score_episodes(spec.scoring, ...)",
        )
    header = f"score={feedback.score!r}".encode()
    return [
        header + content,
        *(f"{a.name}|{a.media_type}|{a.retention}|".encode() + a.data for a in feedback.artifacts),
    ]


def check_feedback(
    benchmark: Any, findings: Findings, runs: list[Rollout], seeds: set[int], scenarios: Sequence[Mapping[str, Any]]
) -> None:
    """Call ``feedback()`` on synthetic records from ``runs`` and check what it would publish."""
    if not runs:
        return
    cases = {
        "ok records": [synthetic_record(run, "ok") for run in runs],
        "mixed records": [synthetic_record(run, _MIXED[i % len(_MIXED)]) for i, run in enumerate(runs)],
        "infra-fault-only records": [synthetic_record(runs[0], "infra_fault")],
    }
    needles = list(_needles(seeds, scenarios))
    for label, records in cases.items():
        published = _published_bytes(benchmark, findings, records, label)
        if published is None:
            continue
        if (
            label == "mixed records"
            and _published_bytes(benchmark, findings, records, label, check_score=False) != published
        ):
            findings.add("feedback.nondeterministic", "feedback() gave different Feedback for the same records")
        for code, needle in needles:
            encoded = needle.encode("utf-8")
            if any(encoded in blob for blob in published):
                findings.add(
                    code,
                    f"feedback() on {label} contains the Host-private value {needle!r:.60}; never publish seeds or "
                    "scenarios (EpisodeRecords carry pool indices only)",
                )
