"""The audit recomputes what a Run reports: every score aggregate, from the recorded Episodes.

A recorded aggregate is only as good as the Episodes it claims to summarise. :class:`ScoreAudit`
follows the log beside the protocol rules and recomputes, with the Benchmark's declared rule
(``run-created``'s ``benchmark_spec.scoring``) and the function the Host records them with
(:func:`evoledger.projections.scoring.score_episodes`):

* each Submission's public Feedback score (``feedback-published``) from its ``episode-finished``
  results, in the order the Submission selected them (the last result of an Episode counts, as in the
  run state);
* each Candidate's Validation score in ``candidate-selected`` from its ``validation-episode-finished``
  results (by pool index), or its recomputed Feedback score when it has none (no Validation
  configured), and the selection itself under those scores (best score per the score direction,
  then fewer Policy failures, then earlier finish position);
* the Assessment score from the Episodes ``assessment-finished`` lists;
* ``run-ended``'s summary: its Assessment score, Submission count and Candidates;

and :func:`report_score_findings` compares ``host/report.json``'s scores with the same recomputation.
Each aggregate that differs is a violation naming its Event, the recorded and the recomputed value.
``evoledger replay --execute`` then re-runs exactly the Episodes read here and compares their
returns and statuses, so a clean ``--execute`` means the headline numbers follow from re-executed
Episodes. A record whose Benchmark declares no rule cannot be recomputed: a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evoledger.projections.audit_judging import JudgingRules, SelectionScore
from evoledger.projections.audit_protocol import ProtocolRules
from evoledger.projections.scoring import ScoreRule, ScoreRuleError, rank_key, recorded_score_rule, score_episodes

__all__ = ["RecomputedScores", "ScoreAudit", "report_score_findings"]

Handler = Callable[[int, dict[str, Any]], None]
Outcome = tuple[str, float]

_NOT_DECLARED: Final = (
    "aggregate scores were not recomputed: the recorded benchmark_spec declares no scoring rule (the Benchmark "
    "computes its own score, or the Run was recorded before rules were declared), so the Feedback, Validation "
    "and Assessment scores are as recorded, not verified"
)


@dataclass(frozen=True, slots=True)
class RecomputedScores:
    """The aggregates recomputed from a Run's Episodes (only those the log holds the Episodes of)."""

    rule: ScoreRule
    feedback: Mapping[str, float | None]
    """Public Feedback score per published Submission."""
    validation: Mapping[str, float | None]
    """Validation score per scored Candidate (its Feedback score when it has no Validation Episodes)."""
    assessment: float | None
    assessed: bool


def _same(recorded: Any, recomputed: float | None) -> bool:
    if recorded is None or recomputed is None:
        return recorded is None and recomputed is None
    if type(recorded) not in (int, float):
        return False
    try:
        return float(recorded) == recomputed
    except OverflowError:  # an integer beyond any float
        return False


def _outcome(status: Any, episode_return: Any) -> Outcome:
    """A recorded ``(status, episode_return)``; ``ValueError`` (a malformed Event) unless the return is finite."""
    if type(episode_return) not in (int, float):
        raise ValueError(f"episode_return {episode_return!r:.40} is not a number")
    try:
        value = float(episode_return)
    except OverflowError:
        raise ValueError(f"episode_return {episode_return!r:.40} is beyond any float") from None
    if not math.isfinite(value):
        raise ValueError(f"episode_return {value!r} is not finite")
    return str(status), value


@dataclass
class ScoreAudit:
    """The score accumulator of one audit fold (after the protocol and judging rules of each Event)."""

    p: ProtocolRules
    j: JudgingRules
    rule: ScoreRule | None = None
    order: dict[str, tuple[int, ...]] = field(default_factory=dict)
    results: dict[str, dict[int, Outcome]] = field(default_factory=dict)
    validation: dict[str, dict[int, Outcome]] = field(default_factory=dict)
    feedback: dict[str, tuple[float | None, int]] = field(default_factory=dict)
    """Per published Submission: its recomputed Feedback score and how many Episodes gave it."""
    candidates: dict[str, float | None] = field(default_factory=dict)
    assessment: float | None = None
    assessed: int | None = None
    """How many Episodes the Assessment lists (``None``: none ran)."""

    def chain(self, handlers: Mapping[str, Handler]) -> dict[str, Handler]:
        """``handlers`` with this accumulator's handler run after each of its kinds' own."""
        own: dict[str, Handler] = {
            "run-created": self.run_created,
            "submission-accepted": self.submission_accepted,
            "episode-finished": self.episode_finished,
            "feedback-published": self.feedback_published,
            "validation-episode-finished": self.validation_episode_finished,
            "candidate-selected": self.candidate_selected,
            "assessment-finished": self.assessment_finished,
            "run-ended": self.run_ended,
        }
        chained = dict(handlers)
        for kind, handler in own.items():
            first = chained.get(kind)
            chained[kind] = handler if first is None else _both(first, handler)
        return chained

    def recomputed(self) -> RecomputedScores | None:
        """What was recomputed (``None``: the record declares no rule)."""
        if self.rule is None:
            return None
        feedback = {sid: score for sid, (score, _n) in self.feedback.items()}
        return RecomputedScores(self.rule, feedback, dict(self.candidates), self.assessment, self.assessed is not None)

    def _differs(
        self, rule: ScoreRule, code: str, seq: int, what: str, recorded: Any, recomputed: float | None, n: int
    ) -> None:
        if _same(recorded, recomputed):
            return
        self.p.violate(
            code,
            seq,
            f"{what} is recorded as {recorded!r:.100} but its {n} recorded Episodes give {recomputed!r} "
            f"({rule.describe()}): the aggregate does not follow from the Episodes",
        )

    def run_created(self, seq: int, d: dict[str, Any]) -> None:
        spec = d.get("benchmark_spec")
        try:
            self.rule = recorded_score_rule(spec if isinstance(spec, dict) else {})
        except ScoreRuleError as exc:
            self.p.violate("score_rule_unreadable", seq, f"{exc}: no aggregate score can be recomputed")
            return
        if self.rule is None:
            self.j.notes.append(_NOT_DECLARED)

    def submission_accepted(self, seq: int, d: dict[str, Any]) -> None:
        sid = d["submission_id"]
        if sid not in self.order:
            self.order[sid] = tuple(d["episodes"])
            self.results[sid] = {}

    def episode_finished(self, seq: int, d: dict[str, Any]) -> None:
        results = self.results.get(d.get("submission_id") or "")
        if results is not None:
            value = d["episode_return"]
            if type(value) is float and value - value == 0.0:  # the common case: a finite float (checked inline)
                results[d["index"]] = d["status"], value
            else:
                results[d["index"]] = _outcome(d["status"], value)

    def feedback_published(self, seq: int, d: dict[str, Any]) -> None:
        sid, rule = d["submission_id"], self.rule
        results = self.results.get(sid)
        if rule is None or results is None:
            return
        outcomes = [results[i] for i in self.order[sid] if i in results]
        recomputed = score_episodes(rule, outcomes)
        self.feedback[sid] = recomputed, len(outcomes)
        what = f"the public Feedback score of {sid}"
        self._differs(rule, "feedback_score", seq, what, d["score"], recomputed, len(outcomes))

    def validation_episode_finished(self, seq: int, d: dict[str, Any]) -> None:
        self.validation.setdefault(d["submission_id"], {})[d["index"]] = _outcome(d["status"], d["episode_return"])

    def candidate_selected(self, seq: int, d: dict[str, Any]) -> None:
        rule = self.rule
        if rule is None:
            return
        rescored: list[SelectionScore] = []
        for s in d["scores"]:
            sid = s["submission_id"]
            done = self.validation.get(sid)
            if done:
                n = len(done)
                recomputed = score_episodes(rule, [done[i] for i in sorted(done)])
                what = f"the Validation score of Candidate {sid}"
            elif sid in self.feedback:  # no Validation Episodes: the Host scores it by its Feedback
                recomputed, n = self.feedback[sid]
                what = f"the score of Candidate {sid} (its Feedback score: it has no Validation Episodes)"
            else:
                continue
            self.candidates[sid] = recomputed
            self._differs(rule, "validation_score", seq, what, s["score"], recomputed, n)
            rescored.append(
                SelectionScore(sid, s["program_digest"], recomputed, s["policy_failures"], s["finish_position"])
            )
        direction = self.j.score_direction
        if direction is None or len(rescored) != len(d["scores"]) or self._as_recorded(rescored, d["scores"]):
            return  # unverifiable, or the recorded scores hold and the judging rules check the selection
        best = min(rescored, key=lambda s: rank_key(s, direction), default=None)
        if best is not None and best.submission_id != d["submission_id"]:
            self.p.violate(
                "selection_recomputed",
                seq,
                f"{d['submission_id']} is selected but under the Validation scores recomputed from the Episodes "
                f"({', '.join(f'{s.submission_id} {s.score!r}' for s in rescored)}; {direction}, then fewer Policy "
                f"failures, then earlier finish position) the selection is {best.submission_id}",
            )

    @staticmethod
    def _as_recorded(rescored: list[SelectionScore], recorded: list[dict[str, Any]]) -> bool:
        return all(_same(r["score"], s.score) for s, r in zip(rescored, recorded, strict=True))

    def assessment_finished(self, seq: int, d: dict[str, Any]) -> None:
        rule = self.rule
        if rule is None or self.assessed is not None:
            return
        outcomes = [_outcome(e["status"], e["episode_return"]) for e in d["episodes"]]
        self.assessed, self.assessment = len(outcomes), score_episodes(rule, outcomes)
        self._differs(rule, "assessment_score", seq, "the Assessment score", d["score"], self.assessment, len(outcomes))

    def run_ended(self, seq: int, d: dict[str, Any]) -> None:
        summary = d.get("summary") or {}
        if "submissions" in summary and summary["submissions"] != len(self.order):
            self.p.violate(
                "end_summary",
                seq,
                f"run-ended's summary counts {summary['submissions']!r:.40} Submissions; {len(self.order)} were"
                " accepted",
            )
        candidates = list(self.p.candidates or ())
        if "candidates" in summary and summary["candidates"] != candidates:
            self.p.violate(
                "end_summary",
                seq,
                f"run-ended's summary names Candidates {summary['candidates']!r:.200}, not {candidates}",
            )
        rule = self.rule
        if rule is None or "assessment_score" not in summary:
            return
        recorded = summary["assessment_score"]
        if self.assessed is None:
            if recorded is not None:
                self.p.violate(
                    "end_summary", seq, f"run-ended's summary has Assessment score {recorded!r:.100} but none ran"
                )
            return
        what = "run-ended's summary Assessment score"
        self._differs(rule, "end_summary", seq, what, recorded, self.assessment, self.assessed)


def _both(first: Handler, second: Handler) -> Handler:
    def both(seq: int, d: dict[str, Any]) -> None:
        first(seq, d)
        second(seq, d)

    return both


def report_score_findings(report: Mapping[str, Any], scores: RecomputedScores) -> list[str]:
    """How ``host/report.json`` (parsed) disagrees with the recomputed scores, one sentence per value."""
    found: list[str] = []

    def compare(where: str, recorded: Any, recomputed: float | None) -> None:
        try:
            same = _same(recorded, recomputed)
        except (TypeError, ValueError):
            same = False
        if not same:
            found.append(
                f"host/report.json says {where} = {recorded!r:.100} but the recorded Episodes give {recomputed!r} "
                f"({scores.rule.describe()})"
            )

    for key, recomputed_of in (("submissions", scores.feedback), ("validation", scores.validation)):
        entries = report.get(key)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            sid = entry.get("submission_id") if isinstance(entry, dict) else None
            if isinstance(sid, str) and sid in recomputed_of:
                compare(f"{key}[{i}].score", entry.get("score"), recomputed_of[sid])
    if scores.assessed and "assessment_score" in report:
        compare("assessment_score", report["assessment_score"], scores.assessment)
    return found
