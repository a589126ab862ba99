"""The judging rules of the audit: Validation, the selection's tie-break, Assessment and the end of a Run.

:class:`JudgingRules` continues where :class:`~evoledger.projections.audit_protocol.ProtocolRules`
stops (it reads that accumulator's Submissions, plan and Candidates). Candidates are the accepted
finish list or, when the Agent never finished and the Run allows it, the ``best_public`` fallback.
Every Candidate must be validated on the same planned Episodes; the selection must follow the rule
best score (per the Benchmark's score direction), then fewer Policy failures, then earlier finish
position; only the selected Program is assessed, on the whole held-out plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from evoledger.projections.audit_protocol import ProtocolRules
from evoledger.projections.scoring import rank_key

__all__ = ["JudgingRules", "SelectionScore"]

_DIRECTION_TEXT: Final = re.compile(r"\((maximize|minimize)\)")
_JUDGING_FAILED: Final = frozenset({"validation_failed", "assessment_failed"})


@dataclass(frozen=True, slots=True)
class SelectionScore:
    """One Candidate's ranking keys as ``candidate-selected`` records them."""

    submission_id: str
    program_digest: str
    score: float | None
    policy_failures: int
    finish_position: int


@dataclass
class JudgingRules:
    """The judging accumulator. ``score_direction`` may be learnt from the tie-break text when not given."""

    p: ProtocolRules
    score_direction: str | None
    direction_source: str
    validation: dict[str, dict[int, str]] = field(default_factory=dict)
    selected: str | None = None
    selected_program: str | None = None
    assessed: bool = False
    ended: str | None = None
    notes: list[str] = field(default_factory=list)
    direction_needed: bool = False
    """A rule needed the score direction and none was given or learnt (the owner may supply one and refold)."""

    def _judged(self, seq: int, what: str) -> tuple[str, ...] | None:
        """The Candidates being judged: the finish list, else the best_public fallback (``None``: unknown)."""
        p = self.p
        if p.candidates is None:
            if p.rules is None or p.rules.fallback != "best_public":
                p.violate(
                    "judging_without_finish",
                    seq,
                    f"{what} although no finish was accepted and the Run has no best_public fallback",
                )
            p.candidates = self._fallback()
        return p.candidates

    def _fallback(self) -> tuple[str, ...] | None:
        scored = [(sid, s) for sid, s in self.p.submissions.items() if s.published and s.score is not None]
        if not scored:
            return ()
        if self.score_direction is None:
            self.notes.append("the best_public fallback Candidate was not verified: the score direction is unknown")
            self.direction_needed = True
            return None
        sign = 1.0 if self.score_direction == "maximize" else -1.0
        best = max(scored, key=lambda item: (sign * (item[1].score or 0.0), -item[1].position))
        return (best[0],)

    def validation_episode_finished(self, seq: int, d: dict[str, Any]) -> None:
        p, sid, index = self.p, d["submission_id"], d["index"]
        candidates = self._judged(seq, "a Validation Episode ran")
        if self.selected is not None:
            p.violate("validation_after_selection", seq, f"Validation Episode {index} of {sid} ran after selection")
        if candidates is not None and sid not in candidates:
            p.violate("validation_not_candidate", seq, f"{sid} was validated but is not a Candidate")
        sub = p.submissions.get(sid)
        if sub is not None and d["program_digest"] != sub.program:
            p.violate(
                "validation_wrong_program",
                seq,
                f"{sid} was validated with Program {d['program_digest']}, not its own {sub.program}",
            )
        if ("validation", index) not in p.planned:
            p.violate("validation_unplanned", seq, f"Validation Episode {index} of {sid} was never planned")
        done = self.validation.setdefault(sid, {})
        if index in done:
            p.violate("duplicate_validation", seq, f"Validation Episode {index} of {sid} ran twice")
        done[index] = d["status"]

    def candidate_selected(self, seq: int, d: dict[str, Any]) -> None:
        p = self.p
        if self.selected is not None:
            p.violate("duplicate_selection", seq, "a second candidate-selected Event")
            return
        scores = [
            SelectionScore(
                s["submission_id"], s["program_digest"], s["score"], s["policy_failures"], s["finish_position"]
            )
            for s in d["scores"]
        ]
        ids = [s.submission_id for s in scores]
        candidates = self._judged(seq, "a Candidate was selected")
        if candidates is None:  # an unverifiable fallback: the scored ones must at least be published
            candidates = p.candidates = tuple(ids)
            if any(sid not in p.submissions or not p.submissions[sid].published for sid in ids):
                p.violate("candidate_not_published", seq, f"the selection scores {ids}, not all of them published")
        self.selected, self.selected_program = d["submission_id"], d["program_digest"]
        if ids != list(candidates):
            p.violate(
                "selection_candidates_mismatch",
                seq,
                f"the selection scores {ids} but the Candidates are {list(candidates)}",
            )
        planned = {i for split, i in p.planned if split == "validation"}
        for position, score in enumerate(scores, start=1):
            self._check_score(seq, score, position, planned)
        self._learn_direction(seq, d.get("tie_break") or "")
        distinct = {s.score for s in scores if s.score is not None}
        direction = self.score_direction or ("maximize" if len(distinct) <= 1 else None)
        if direction is None:
            self.notes.append("the selection's tie-break was not verified: the score direction is unknown")
            self.direction_needed = True
            return
        best = min(scores, key=lambda s: rank_key(s, direction), default=None)
        if best is not None and best.submission_id != self.selected:
            p.violate(
                "wrong_selection",
                seq,
                f"{self.selected} was selected but the tie-break rule ({direction} "
                f"score, then fewer Policy failures, then earlier finish position) picks {best.submission_id}",
            )

    def record_direction(self, seq: int, direction: str, source: str) -> None:
        """Learn the score direction from the log, or report that the log contradicts the known one."""
        if self.score_direction is None:
            self.score_direction, self.direction_source = direction, source
        elif direction != self.score_direction:
            self.p.violate(
                "direction_mismatch",
                seq,
                f"{source} says {direction} but the Benchmark's score direction is {self.score_direction} "
                f"({self.direction_source})",
            )

    def _learn_direction(self, seq: int, tie_break: str) -> None:
        text = _DIRECTION_TEXT.search(tie_break)
        if text is not None:
            self.record_direction(seq, text.group(1), "the candidate-selected tie-break text")

    def _check_score(self, seq: int, s: SelectionScore, position: int, planned: set[int]) -> None:
        p, sid = self.p, s.submission_id
        sub = p.submissions.get(sid)
        if s.finish_position != position:
            p.violate(
                "selection_position",
                seq,
                f"{sid} is scored at finish position {s.finish_position} but it is Candidate {position}",
            )
        if sub is None:
            return
        if s.program_digest != sub.program:
            p.violate(
                "selection_wrong_program", seq, f"{sid} is scored with Program {s.program_digest}, not {sub.program}"
            )
        rules = p.rules
        if rules is None or rules.validation_episodes is None:
            return
        if rules.validation_episodes == 0:
            failures, score_ok = sub.failures, s.score == sub.score
        else:
            done = self.validation.get(sid, {})
            if set(done) != planned:
                missing = sorted(planned - set(done))
                p.violate(
                    "validation_incomplete",
                    seq,
                    f"{sid} was validated on {len(done)} Episodes; every "
                    f"Candidate runs the same {len(planned)} (missing {missing[:8]})",
                )
            failures, score_ok = sum(1 for status in done.values() if status != "ok"), True
        if s.policy_failures != failures:
            p.violate(
                "selection_failures",
                seq,
                f"{sid} is ranked with {s.policy_failures} Policy failures but the log shows {failures}",
            )
        if not score_ok:
            p.violate(
                "selection_score",
                seq,
                f"{sid} is ranked with score {s.score} but its Feedback score is "
                f"{sub.score} (no Validation configured)",
            )

    def assessment_finished(self, seq: int, d: dict[str, Any]) -> None:
        p = self.p
        if self.assessed:
            p.violate("duplicate_assessment", seq, "a second assessment-finished Event")
        self.assessed = True
        if self.selected is None:
            p.violate("assessment_before_selection", seq, "Assessment ran before any Candidate was selected")
        elif d["submission_id"] != self.selected or d["program_digest"] != self.selected_program:
            p.violate(
                "assessment_not_selected",
                seq,
                f"Assessment ran {d['submission_id']} ({d['program_digest']}) "
                f"but the selected Program is {self.selected} ({self.selected_program})",
            )
        planned = sorted(i for split, i in p.planned if split == "assessment")
        indices = sorted(e["index"] for e in d["episodes"])
        if indices != planned:
            p.violate(
                "assessment_incomplete",
                seq,
                f"Assessment covered {len(indices)} Episodes {indices[:8]}; the held-out plan has {len(planned)}",
            )

    def run_ended(self, seq: int, d: dict[str, Any]) -> None:
        p, reason, chosen = self.p, d["reason"], d.get("selected_submission_id")
        if self.ended is not None:
            p.violate("duplicate_end", seq, "a second run-ended Event")
        self.ended = reason
        if (reason == "finished") != p.finished:
            p.violate(
                "end_reason",
                seq,
                f"the Run ended with reason {reason!r} but finish was {'' if p.finished else 'never '}accepted",
            )
        if chosen != self.selected:
            p.violate("end_selection", seq, f"run-ended names {chosen} but {self.selected} was selected")
        summary = d.get("summary") or {}
        if "budget_left" in summary:
            p.budget_state(seq, "run-ended's summary", summary.get("budget_used"), summary["budget_left"])
        if reason in _JUDGING_FAILED or not p.candidates:
            return
        if self.selected is None:
            p.violate("selection_missing", seq, f"the Run ended ({reason}) with Candidates but no selection")
        rules = p.rules
        if not self.assessed and rules is not None and rules.assessment_episodes:
            p.violate(
                "assessment_missing",
                seq,
                f"the Run ended ({reason}) without the configured Assessment of {rules.assessment_episodes} Episodes",
            )
