"""The protocol rules of the audit up to finish: Run creation, the plan, budget, Submissions, Episodes, Feedback.

:func:`rules_of` applies the kernel's ``RunConfig`` formulas (pool size, Episodes per Submission,
Candidate limit, the infra-fault refund rule of ``projections.refunds``) to the configuration
``run-created`` recorded, so the audit needs nothing but the log (and the per-Submission protocol
cap, which the caller passes); :class:`Violation`, :class:`PlannedSeed`, :class:`RunRules` and
:class:`AuditedSubmission` are the records every part of the audit keeps.

:class:`ProtocolRules` is the accumulator of :func:`evoledger.projections.audit.fold` for these
kinds (``projections.audit_judging`` takes over at finish): one handler per Event kind, each
reading a payload dict and recording :class:`Violation` values. It belongs to one fold (mutable for
speed) and does no I/O. Rule codes are stable snake_case names; every message says what the log
holds, what the rule expected and what it means.

Budget arithmetic follows the log: the running remaining budget is ``budget - charged + refunded``
and every recorded budget figure (``budget_before``/``budget_after``, a Feedback's
``budget_used``/``budget_left``, finish, the end summary) must equal it. After a mismatch the fold
follows the record, so one bad figure is reported once (plus one ``budget_not_conserved``) rather
than at every later step. Every infra fault of a Submission must be refunded or charged (``suspicious``)
exactly as ``projections.refunds`` says, the same rule the Host applied (``refund_limit``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evoledger.projections.refunds import RefundRule, refund_units

__all__ = ["AuditedSubmission", "PlannedSeed", "ProtocolRules", "RunRules", "Violation", "rules_of"]


# -- the audit's vocabulary: the rules of a Run re-derived from its log, and the records the audit keeps ---


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable ``rule`` code, what it means, and the first Event that shows it."""

    rule: str
    message: str
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class PlannedSeed:
    """One ``episode-planned`` Event: the Host seeds of a pool Episode."""

    split: str
    index: int
    env_seed: int
    policy_seed: int
    scenario: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunRules:
    """The rules of one Run, re-derived from its ``run-created`` Event (``None``: not recorded)."""

    budget: int
    max_submissions: int
    strict: bool
    pool_size: int | None
    episodes_per_submission: int | None
    candidate_limit: int | None
    validation_episodes: int | None
    assessment_episodes: int | None
    fallback: str | None
    refund_rule: RefundRule | None = None
    """The infra-fault refund rule the configuration records (``None``: older Runs record none)."""


def _count(mapping: object, key: str) -> int | None:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if type(value) is int and value >= 0 else None


def rules_of(created: dict[str, Any], episode_cap: int) -> RunRules:
    """The rules recorded by a ``run-created`` payload (the kernel's RunConfig formulas, from the log)."""
    budget, max_subs = created["episode_budget"], created["max_submissions"]
    if type(budget) is not int or type(max_subs) is not int:
        raise TypeError("episode_budget and max_submissions must be integers")
    raw = created.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    validation, assessment = config.get("validation"), config.get("assessment")
    pool = _count(config, "episode_pool_size") or budget
    per_sub = min(pool, _count(config, "max_episodes_per_submission") or episode_cap, episode_cap)
    val_eps, max_candidates = _count(validation, "episodes"), _count(validation, "max_candidates")
    limit = None if val_eps is None else (max_candidates if val_eps > 0 else 1)
    fallback = config.get("fallback")
    return RunRules(
        budget=budget,
        max_submissions=max_subs,
        strict=created.get("finish_budget_policy") == "require_budget_exhaustion",
        pool_size=pool,
        episodes_per_submission=per_sub,
        candidate_limit=limit,
        validation_episodes=val_eps,
        assessment_episodes=_count(assessment, "episodes"),
        fallback=fallback if isinstance(fallback, str) else None,
        refund_rule=RefundRule.recorded(config),
    )


class AuditedSubmission:
    """One accepted Submission as the audit tracks it (results and voided/refunded indices)."""

    __slots__ = ("episodes", "position", "program", "published", "refunded", "results", "score", "voided")

    def __init__(self, position: int, program: str, episodes: frozenset[int]) -> None:
        self.position = position
        self.program = program
        self.episodes = episodes
        self.results: dict[int, str] = {}
        self.voided: set[int] = set()
        self.refunded: set[int] = set()
        self.published = False
        self.score: float | None = None

    @property
    def failures(self) -> int:
        return sum(1 for status in self.results.values() if status != "ok")


# -- the protocol rules ---------------------------------------------------------------------------------


@dataclass
class ProtocolRules:
    """The protocol accumulator (see the module docstring). ``add`` receives every violation."""

    add: Callable[[Violation], None]
    episode_cap: int
    rules: RunRules | None = None
    remaining: int = 0
    charged: int = 0
    refunded: int = 0
    submissions: dict[str, AuditedSubmission] = field(default_factory=dict)
    snapshots: set[str] = field(default_factory=set)
    planned: dict[tuple[str, int], PlannedSeed] = field(default_factory=dict)
    agent_began: bool = False
    finished: bool = False
    candidates: tuple[str, ...] | None = None
    bulk_owners: dict[str, set[str]] = field(default_factory=dict)
    permanent: set[str] = field(default_factory=set)
    latest_digests: frozenset[str] = frozenset()
    unconserved: bool = False
    overspent: bool = False

    def violate(self, rule: str, seq: int, message: str) -> None:
        self.add(Violation(rule, message, seq))

    # -- budget -------------------------------------------------------------------------------------
    def _conserved(self, seq: int, what: str) -> None:
        rules = self.rules
        if (
            rules is not None
            and not self.overspent
            and (self.remaining < 0 or self.charged - self.refunded > rules.budget)
        ):
            self.overspent = True  # reported once
            self.violate(
                "budget_negative",
                seq,
                f"after {what} {self.charged - self.refunded} Episodes are spent of a "
                f"budget of {rules.budget} (remaining {self.remaining}): the budget went negative",
            )
        if rules is not None and not self.unconserved and self.charged - self.refunded + self.remaining != rules.budget:
            self.unconserved = True  # reported once: every later step inherits the same drift
            self.violate(
                "budget_not_conserved",
                seq,
                f"after {what}: charged {self.charged} - refunded {self.refunded} + remaining "
                f"{self.remaining} != budget {rules.budget}; Episodes were given or taken outside the rules",
            )

    def budget_state(self, seq: int, what: str, used: object, left: object) -> None:
        if used is not None and used != self.charged - self.refunded:
            self.violate(
                "budget_mismatch",
                seq,
                f"{what} records budget_used {used} but the log has charged "
                f"{self.charged - self.refunded} net Episodes",
            )
        if left != self.remaining:
            self.violate(
                "budget_mismatch",
                seq,
                f"{what} records budget_left {left} but {self.remaining} remain by the log's own arithmetic",
            )

    # -- Run creation and planning ------------------------------------------------------------------
    def run_created(self, seq: int, d: dict[str, Any]) -> None:
        if self.rules is not None:
            self.violate("duplicate_run_created", seq, "a second run-created Event: a record holds one Run")
            return
        if seq != 0:
            self.violate("run_created_late", seq, f"run-created is event {seq}, not the first Event of the log")
        self.rules = rules_of(d, self.episode_cap)
        self.remaining = self.rules.budget

    def episode_planned(self, seq: int, d: dict[str, Any]) -> None:
        if d.get("evaluation_id") is not None:
            return
        key = (d["split"], d["index"])
        if key in self.planned:
            self.violate("duplicate_plan", seq, f"{key[0]} Episode {key[1]} is planned twice; the pool changed")
        elif self.agent_began or self.submissions:
            self.violate(
                "plan_after_start",
                seq,
                f"{key[0]} Episode {key[1]} was planned after the Agent started; "
                "the Episode pool must be fixed (and committed) before",
            )
        scenario = d.get("scenario") or {}
        self.planned[key] = PlannedSeed(key[0], key[1], d["env_seed"], d["policy_seed"], scenario)

    def program_snapshotted(self, seq: int, d: dict[str, Any]) -> None:
        self.snapshots.add(d["program_digest"])

    def agent_started(self, seq: int, d: dict[str, Any]) -> None:
        self.agent_began = True

    # -- Submissions and Episodes -------------------------------------------------------------------
    def submission_accepted(self, seq: int, d: dict[str, Any]) -> None:
        sid, episodes = d["submission_id"], d["episodes"]
        before, after, n = d["budget_before"], d["budget_after"], len(episodes)
        if self.finished:
            self.violate("accepted_after_finish", seq, f"{sid} was accepted after finish; Agent authority had ended")
        if sid in self.submissions:
            self.violate("duplicate_submission", seq, f"{sid} is accepted a second time")
            return
        if before != self.remaining:
            self.violate("budget_mismatch", seq, f"{sid} records budget_before {before} but {self.remaining} remained")
            self.remaining = before  # follow the record from here on; conservation reports the drift once
        if after != before - n:
            self.violate("budget_arithmetic", seq, f"{sid} records budget_after {after} for {n} Episodes from {before}")
        position = len(self.submissions) + 1
        if d["submissions_used"] != position:
            self.violate(
                "submission_count",
                seq,
                f"{sid} records submissions_used {d['submissions_used']} but it is Submission {position}",
            )
        if not all(type(i) is int for i in episodes) or any(b <= a for a, b in itertools.pairwise(episodes)):
            self.violate("episode_order", seq, f"{sid} selects {episodes[:8]}...: indices must be strictly increasing")
        rules = self.rules
        if rules is not None:
            if position > rules.max_submissions:
                self.violate(
                    "submission_limit", seq, f"{sid} is Submission {position} of at most {rules.max_submissions}"
                )
            if rules.episodes_per_submission is not None and n > rules.episodes_per_submission:
                self.violate(
                    "episode_limit",
                    seq,
                    f"{sid} selects {n} Episodes; at most {rules.episodes_per_submission} per Submission",
                )
            if rules.pool_size is not None and episodes and (episodes[-1] >= rules.pool_size or episodes[0] < 0):
                self.violate(
                    "outside_pool", seq, f"{sid} selects index {episodes[-1]} outside the pool 0:{rules.pool_size}"
                )
            if rules.strict and rules.episodes_per_submission is not None:
                later = rules.max_submissions - position
                if before - n > later * rules.episodes_per_submission:
                    self.violate(
                        "budget_allocation",
                        seq,
                        f"under require_budget_exhaustion {sid} leaves "
                        f"{before - n} Episodes that {later} more Submissions cannot spend",
                    )
        if d["program_digest"] not in self.snapshots:
            self.violate(
                "program_not_snapshotted",
                seq,
                f"{sid}'s Program {d['program_digest']} has no earlier program-snapshotted Event",
            )
        self.submissions[sid] = AuditedSubmission(position, d["program_digest"], frozenset(episodes))
        self.remaining -= n
        self.charged += n
        self._conserved(seq, f"accepting {sid}")

    def _episode_owner(self, seq: int, d: dict[str, Any], what: str) -> AuditedSubmission | None:
        """The accepted Submission an Episode Event names; ``what`` (formatted with the Event's ``index`` only
        when a rule is broken: this runs for every Episode) says what the Event records."""
        sid = d.get("submission_id")
        if sid is None:
            return None  # a standalone Evaluation's Episode: not part of a Run's protocol
        sub = self.submissions.get(sid)
        if sub is None:
            what = what.format(index=d.get("index"))
            self.violate("unknown_submission", seq, f"{what} of {sid}, which was never accepted")
            return None
        if self.finished:
            what = what.format(index=d.get("index"))
            self.violate(
                "episode_after_finish", seq, f"{what} of {sid} after finish: no Episode runs once Agent authority ends"
            )
        return sub

    def episode_started(self, seq: int, d: dict[str, Any]) -> None:
        index = d["index"]
        sub = self._episode_owner(seq, d, "Episode {index} started")
        if sub is not None and index not in sub.episodes:
            self.violate(
                "episode_not_selected",
                seq,
                f"Episode {index} of {d['submission_id']} started but the Submission did not select it",
            )

    def episode_finished(self, seq: int, d: dict[str, Any]) -> None:
        index = d["index"]
        sub = self._episode_owner(seq, d, "the result of Episode {index}")
        if sub is None:
            return
        sid = d["submission_id"]
        if index not in sub.episodes:
            self.violate(
                "episode_not_selected",
                seq,
                f"a result for Episode {index} of {sid}, which it did not "
                "select: an Episode ran (or was recorded) without being paid for",
            )
        elif index in sub.results and index not in sub.voided:
            self.violate(
                "duplicate_result",
                seq,
                f"a second result for Episode {index} of {sid} with no infra "
                "fault voiding the first: an Episode ran twice for one budget unit",
            )
        sub.voided.discard(index)
        sub.results[index] = d["status"]

    def infra_fault(self, seq: int, d: dict[str, Any]) -> None:
        sub = self._episode_owner(seq, d, "an infra fault")
        if sub is None:
            return
        sid, indices, units = d["submission_id"], d["indices"], d["refunded_units"]
        stray = [i for i in indices if i not in sub.episodes]
        if stray:
            self.violate(
                "episode_not_selected", seq, f"an infra fault of {sid} names Episodes {stray} it did not select"
            )
        again = [i for i in indices if i in sub.refunded]
        if units and (again or units > len(indices)):
            self.violate(
                "double_refund",
                seq,
                f"{sid}'s Episodes {again or indices} are refunded again "
                f"({units} units): one Episode is refunded at most once",
            )
        self._refund_rule(seq, d, sub)
        done = [i for i in indices if i in sub.results and i not in sub.voided]
        if units and done:
            self.violate(
                "refund_after_result",
                seq,
                f"{sid} is refunded for Episodes {done} that already have "
                "a result: the Episode ran and was also given back",
            )
        sub.voided.update(indices)
        if units:
            sub.refunded.update(indices)
        self.remaining += units
        self.refunded += units
        if self.rules is not None and self.remaining > self.rules.budget:
            self.violate(
                "over_refund",
                seq,
                f"the refund leaves {self.remaining} Episodes, more than the budget {self.rules.budget}",
            )
        self._conserved(seq, f"refunding {sid}")

    def _refund_rule(self, seq: int, d: dict[str, Any], sub: AuditedSubmission) -> None:
        """The fault is refunded or charged exactly as ``projections.refunds`` says (when the Run records a rule)."""
        rules = self.rules
        if rules is None or rules.refund_rule is None or len(d["indices"]) != 1:
            return
        expected = refund_units(
            rules.refund_rule,
            submission_episodes=len(sub.episodes),
            submission_refunds=len(sub.refunded),
            run_refunds=self.refunded,
            budget=rules.budget,
        )
        units, suspicious = d["refunded_units"], bool(d.get("suspicious", False))
        if units != expected or suspicious != (expected == 0):
            limits = (
                f"{len(sub.refunded)} of {rules.refund_rule.limit(len(sub.episodes))} refunds for the Submission, "
                f"{self.refunded} of {rules.refund_rule.limit(rules.budget)} for the Run"
            )
            self.violate(
                "refund_limit",
                seq,
                f"an infra fault of {d['submission_id']} records refunded_units {units} and suspicious {suspicious}, "
                f"but with {limits} the refund rule gives {expected} unit(s) and suspicious {expected == 0}",
            )

    def feedback_published(self, seq: int, d: dict[str, Any]) -> None:
        sid = d["submission_id"]
        sub = self.submissions.get(sid)
        if sub is None:
            self.violate("unknown_submission", seq, f"Feedback published for {sid}, which was never accepted")
            return
        if sub.published:
            self.violate("duplicate_feedback", seq, f"Feedback of {sid} is published a second time")
        pending = sorted(i for i in sub.episodes if i not in sub.results and i not in sub.voided)
        if pending:
            self.violate(
                "feedback_before_results",
                seq,
                f"Feedback of {sid} is published while Episodes {pending[:8]} have neither a result nor an infra fault",
            )
        self.budget_state(seq, f"the Feedback of {sid}", d["budget_used"], d["budget_left"])
        sub.published, sub.score = True, d["score"]
        digests = set()
        for artifact in d["artifacts"]:
            digests.add(artifact["digest"])
            if artifact["retention"] == "permanent":
                self.permanent.add(artifact["digest"])
            else:
                self.bulk_owners.setdefault(artifact["digest"], set()).add(sid)
        self.latest_digests = frozenset(digests)

    def bulk_evicted(self, seq: int, d: dict[str, Any]) -> None:
        for digest in d["digests"]:
            if digest in self.permanent:
                self.violate("evicted_permanent", seq, f"Object {digest} of a permanent Artifact was evicted")
            elif digest in self.latest_digests:
                self.violate(
                    "evicted_newest",
                    seq,
                    f"Object {digest} of the newest Submission's Feedback was "
                    "evicted; the newest Submission is never evicted",
                )
            elif digest not in self.bulk_owners:
                self.violate(
                    "evicted_unpublished", seq, f"Object {digest} was evicted but no bulk Artifact published it"
                )

    # -- finish and judging -------------------------------------------------------------------------
    def finish_accepted(self, seq: int, d: dict[str, Any]) -> None:
        if self.finished:
            self.violate("duplicate_finish", seq, "a second finish was accepted")
            return
        candidates = tuple(d["candidates"])
        for sid in candidates:
            sub = self.submissions.get(sid)
            if sub is None or not sub.published:
                self.violate(
                    "candidate_not_published",
                    seq,
                    f"Candidate {sid} is not an accepted Submission with published Feedback",
                )
        rules = self.rules
        if rules is not None and rules.candidate_limit is not None and len(candidates) > rules.candidate_limit:
            self.violate(
                "candidate_limit",
                seq,
                f"finish names {len(candidates)} Candidates; this Run allows {rules.candidate_limit}",
            )
        if rules is not None and rules.strict and self.remaining > 0:
            self.violate(
                "finish_with_budget",
                seq,
                f"finish was accepted with {self.remaining} Episodes left under require_budget_exhaustion",
            )
        self.budget_state(seq, "finish", None, d["budget_left"])
        self.finished, self.candidates = True, candidates

    def finish(self) -> None:
        """End-of-log checks: the plan matches the recorded configuration."""
        rules = self.rules
        if rules is None:
            return
        for split, expected in (
            ("train", rules.pool_size),
            ("validation", rules.validation_episodes),
            ("assessment", rules.assessment_episodes),
        ):
            indices = sorted(i for s, i in self.planned if s == split)
            if expected is not None and indices != list(range(expected)):
                self.violate(
                    "plan_incomplete",
                    0,
                    f"the {split} plan has {len(indices)} Episodes; the configuration "
                    f"asks for {expected} (indices 0..{expected - 1})",
                )
