"""The Session protocol under random request sequences: a real Host beside a plain-Python model.

The machine drives a real :class:`RunHost` (real ledger, real executor processes, real Program
snapshots, the toy Benchmark with some pool indices that infra-fault) through submit / status /
finish requests, Program edits and Host restarts (the Host rebuilt from its log, as ``resume`` does).
After every step: the Host's answer equals the model's; budget is never negative and is conserved;
limits hold; nothing is accepted after finish; the run state equals a fresh fold of the log; bulk
retention keeps within its cap (except the protected newest submission) and never touches a
permanent Artifact; the Agent mirror never holds a host fact. Hostile requests (arbitrary selector
text, finish lists up to the protocol's bound of long, repeated, unknown ids) are answered as the model
says, with a bounded message, and what the ledger keeps of each refusal is bounded.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig
from evoledger.kernel.run.config import FinishBudgetPolicy
from evoledger.kernel.run.host import RunHost
from evoledger.kernel.run.live import LiveRun
from evoledger.kernel.run.setup import create_run
from evoledger.kernel.session import (
    MAX_FINISH_CANDIDATES,
    MAX_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_SELECTOR_LENGTH,
    FinishParams,
    Rejection,
    SelectorError,
    SubmitParams,
    format_selector,
    parse_selector,
)
from evoledger.ledger.store import Ledger
from evoledger.projections import mirror, retention, run_state
from evoledger.projections.mirror_files import diff_mirror
from hypothesis import event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

POOL = 6
FAULTY = (4,)
CAP = 700  # bytes of bulk Feedback (counted twice: Host record + mirror); small, so retention evicts
BENCHMARK = BenchmarkRef(name="toy-counter", config={"infra_fault_indices": list(FAULTY), "max_episode_steps": 4})

_POLICY = "def make_policy(context):\n    class P:\n        def act(self, o):\n            {body}\n    return P()\n"
POLICIES = {
    "good": _POLICY.format(body="return 0"),
    "raises": _POLICY.format(body="raise ValueError('x')"),
    "invalid": _POLICY.format(body="return 99"),
}

_EXECUTOR: list[LocalExecutor] = []


def _executor() -> LocalExecutor:
    if not _EXECUTOR:
        _EXECUTOR.append(LocalExecutor(BENCHMARK, workers=1))
        atexit.register(_EXECUTOR[0].close)
    return _EXECUTOR[0]


@dataclass
class Model:
    """The protocol, as the documentation states it."""

    budget: int
    submission_limit: int
    per_submission: int
    candidate_limit: int
    strict: bool
    budget_left: int = 0
    charged: int = 0
    refunded: int = 0
    submissions: list[str] = field(default_factory=list)
    finished: bool = False

    def submit(self, indices: tuple[int, ...] | None, program_ok: bool) -> tuple[str | None, Any]:
        if self.finished:
            return "session_closed", None
        if indices is None:
            return "invalid_request", None
        if any(i >= POOL for i in indices):
            return "episode_limit", None
        if len(self.submissions) >= self.submission_limit:
            return "submission_limit", None
        n = len(indices)
        if n > self.per_submission:
            return "episode_limit", None
        if self.budget_left == 0 or n > self.budget_left:
            return "budget_exhausted", None
        if self.strict:
            later = self.submission_limit - len(self.submissions) - 1
            if self.budget_left - n > later * self.per_submission:
                return "budget_allocation", None
        if not program_ok:
            return "program_invalid", None
        # Infra faults are refunded within the default limits, max(2, floor(n / 10)) for the Submission's n
        # Episodes and for the Run's budget; past them they are charged (RunConfig.infra_refunds).
        refunds = 0
        for i in indices:
            if i in FAULTY and refunds < max(2, n // 10) and self.refunded + refunds < max(2, self.budget // 10):
                refunds += 1
        self.budget_left += refunds - n
        self.charged += n
        self.refunded += refunds
        sid = f"submission-{len(self.submissions) + 1:06d}"
        self.submissions.append(sid)
        return None, sid

    def finish(self, ids: list[str]) -> str | None:
        if self.finished:
            return "session_closed"
        if self.strict and self.budget_left > 0:
            return "budget_remaining"
        if len(set(ids)) != len(ids):
            return "duplicate_submission"
        if any(i not in self.submissions for i in ids):
            return "unknown_submission"
        if len(ids) > self.candidate_limit:
            return "candidate_limit"
        self.finished = True
        return None


_in_pool = st.lists(st.integers(0, POOL - 1), min_size=1, max_size=4, unique=True).map(lambda xs: tuple(sorted(xs)))
_anywhere = st.lists(st.integers(0, POOL + 1), min_size=1, max_size=5, unique=True).map(lambda xs: tuple(sorted(xs)))
selectors = st.one_of(_in_pool, _in_pool, _in_pool, _anywhere, st.none())
"""Mostly valid selectors (reused indices included), some outside the pool, some malformed (None)."""


def _answer(host: RunHost, method: str, params: Any) -> tuple[dict[str, Any], str | None]:
    """The Host's answer and its rejection code (``None`` when accepted)."""
    try:
        return host.handle(method, params).wire(), None
    except Rejection as rejection:
        return {"message": rejection.message, "retryable": rejection.retryable}, rejection.code


class ProtocolMachine(RuleBasedStateMachine):
    @initialize(
        budget=st.integers(3, 12),
        submission_limit=st.integers(1, 6),
        per_submission=st.integers(1, 5),
        strict=st.booleans(),
        validation=st.sampled_from([0, 2]),
    )
    def create(self, budget: int, submission_limit: int, per_submission: int, strict: bool, validation: int) -> None:
        policy: FinishBudgetPolicy = "require_budget_exhaustion" if strict else "allow_early"
        if strict and submission_limit * min(per_submission, POOL) < budget:
            policy, strict = "allow_early", False  # such a config is refused at creation (tested elsewhere)
        self.config = RunConfig(
            benchmark=BENCHMARK,
            episode_budget=budget,
            episode_pool_size=POOL,
            max_submissions=submission_limit,
            max_episodes_per_submission=per_submission,
            finish_budget_policy=policy,
            bulk_feedback_retention_bytes=CAP,
            validation=ValidationConfig(episodes=validation, max_candidates=2),
            assessment=AssessmentConfig(episodes=0),
        )
        self.root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))
        program = self.root / "initial"
        program.mkdir()
        (program / "policy.py").write_text(POLICIES["good"], encoding="utf-8")
        self.created = create_run(self.root / "run", self.config, initial_program=program)
        self.ledger, self.layout = self.created.ledger, self.created.layout
        self.model = Model(
            budget=budget,
            submission_limit=submission_limit,
            per_submission=self.config.episodes_per_submission,
            candidate_limit=self.config.candidate_limit,
            strict=strict,
            budget_left=budget,
        )
        self.program_ok = True
        self._start_host()

    def _start_host(self) -> None:
        self.host = LiveRun.open(
            ledger=self.ledger,
            layout=self.layout,
            config=self.config,
            benchmark=self.created.benchmark,
            plan=self.created.plan,
            executor=_executor(),
        ).host

    def teardown(self) -> None:
        if hasattr(self, "ledger"):
            self._check_mirror_has_no_host_fact()
            self.ledger.close()
            shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------------------------------------- rules

    @rule(indices=selectors)
    def submit(self, indices: tuple[int, ...] | None) -> None:
        selector = "3:1" if indices is None else format_selector(indices)
        expected_code, expected_id = self.model.submit(indices, self.program_ok)
        answer, code = _answer(self.host, "submit", SubmitParams(program="program", episodes=selector))
        event(f"submit: {code or 'accepted'}")
        assert code == expected_code, (code, answer, expected_code)
        if code is None:
            assert answer["submission_id"] == expected_id
            assert answer["budget_left"] == self.model.budget_left
            assert sorted(answer["infra_faults"]) == sorted(i for i in indices or () if i in FAULTY)

    @rule(picks=st.lists(st.integers(0, 7), min_size=1, max_size=4))
    def finish(self, picks: list[int]) -> None:
        known = self.model.submissions
        ids = [known[p] if p < len(known) else f"submission-{900 + p:06d}" for p in picks]
        expected = self.model.finish(ids)
        answer, code = _answer(self.host, "finish", FinishParams(candidates=ids))
        event(f"finish: {code or 'accepted'}")
        assert code == expected, (code, answer)
        if code is not None:
            assert answer["retryable"] == (code == "budget_remaining")

    @rule(text=st.text(alphabet="0123456789:,- \t", max_size=40) | st.text(max_size=MAX_SELECTOR_LENGTH).filter(bool))
    def submit_any_selector(self, text: str) -> None:
        """Any selector text the protocol lets through: the Host's answer is the model's, its record bounded."""
        if not text:
            return
        try:
            indices: tuple[int, ...] | None = parse_selector(text)
        except SelectorError:
            indices = None
        expected_code, _ = self.model.submit(indices, self.program_ok)
        answer, code = _answer(self.host, "submit", SubmitParams(program="program", episodes=text))
        event(f"submit any: {code or 'accepted'}")
        assert code == expected_code, (code, answer, expected_code)
        if code is not None:
            self._check_bounded_refusal(answer, "submission-rejected")

    @rule(
        known=st.lists(st.integers(0, 7), max_size=4),
        junk=st.integers(0, MAX_FINISH_CANDIDATES),
        repeats=st.integers(1, 3),
    )
    def finish_hostile(self, known: list[int], junk: int, repeats: int) -> None:
        """finish with up to the protocol's bound of ids: long unknown ones, repeated ones."""
        ids = [self.model.submissions[k] for k in known if k < len(self.model.submissions)]
        ids += ["submission-" + str(n).zfill(MAX_ID_CHARS - 11) for n in range(junk)]
        ids = (ids * repeats)[:MAX_FINISH_CANDIDATES]
        if not ids:
            return
        expected = self.model.finish(ids)
        answer, code = _answer(self.host, "finish", FinishParams(candidates=ids))
        event(f"finish hostile: {code or 'accepted'}")
        assert code == expected, (code, answer)
        if code is not None:
            self._check_bounded_refusal(answer, "finish-rejected")

    def _check_bounded_refusal(self, answer: dict[str, Any], kind: str) -> None:
        assert len(answer["message"]) <= MAX_MESSAGE_CHARS
        *_, last = self.ledger.records(kinds=[kind])  # the refusal just recorded
        assert len(last.payload) < 4096, len(last.payload)

    @rule()
    def status(self) -> None:
        answer = self.host.handle("status", None).wire()
        assert answer["budget_left"] == self.model.budget_left
        assert answer["submissions_used"] == len(self.model.submissions)
        assert answer["finished"] == self.model.finished

    @rule(kind=st.sampled_from(["good", "raises", "invalid", "missing"]))
    def edit_program(self, kind: str) -> None:
        policy = self.layout.program / "policy.py"
        if kind == "missing":
            policy.unlink(missing_ok=True)
        else:
            policy.write_text(POLICIES[kind], encoding="utf-8")
        self.program_ok = kind != "missing"

    @precondition(lambda self: hasattr(self, "host"))
    @rule()
    def restart_host(self) -> None:
        """The Host dies and is rebuilt from its log alone (what ``resume`` does)."""
        before = self.host.state
        self._start_host()
        assert self.host.state == before

    # -------------------------------------------------------------------------------------- invariants

    @invariant()
    def budget_is_conserved_and_never_negative(self) -> None:
        s = self.host.state
        assert s.budget_left >= 0
        assert s.budget_left == self.model.budget_left
        assert s.charged - s.refunded + s.budget_left == s.episode_budget
        assert s.charged == sum(len(s.submissions[i].episodes) for i in s.submission_order)
        assert s.submissions_used <= s.max_submissions

    @invariant()
    def the_run_state_is_a_fresh_fold_of_the_log(self) -> None:
        assert run_state.fold(r.event for r in self.ledger.events()) == self.host.state

    @invariant()
    def retention_keeps_bulk_bytes_within_the_cap(self) -> None:
        kept = retention.fold(r.event for r in self.ledger.events())
        newest = kept.newest
        # Eviction is by digest and never touches the newest Submission, so what it cannot free is the newest's
        # bulk Artifacts and any older copy with the same bytes (an unchanged Program's identical Feedback).
        protected = (
            sum(
                retention.counted_bytes(a.size)
                for sub in kept.submissions.values()
                for a in sub.bulk.values()
                if a.digest in newest.digests
            )
            if newest is not None
            else 0
        )
        assert kept.bulk_bytes <= max(CAP, protected)
        assert not set(kept.evicted) & set(kept.permanent)

    @invariant()
    def the_mirror_on_disk_equals_a_fresh_fold(self) -> None:
        fresh = mirror.fold((r.stored.visibility, r.event) for r in self.ledger.events())
        assert diff_mirror(fresh, self.layout.feedback, self.ledger.objects) == []

    def _check_mirror_has_no_host_fact(self) -> None:
        with Ledger.open(self.layout.root) as book:
            facts = [r.stored.data() for r in book.events(kinds=["episode-planned", "run-created", "run-key"])]
            secrets = {
                str(value)
                for data in facts
                for key in ("env_seed", "policy_seed", "seed", "key")
                if (isinstance(value := data.get(key), int) and value > 10_000) or isinstance(value, str)
            }
        for path in self.layout.feedback.rglob("*"):
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                assert not any(secret in text for secret in secrets), path


TestProtocol = ProtocolMachine.TestCase
