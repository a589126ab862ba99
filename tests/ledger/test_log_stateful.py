"""A stateful model test: the Ledger behaves like a plain list of events plus a dict of Objects."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import ConcurrencyError, ObjectEvictedError
from evoledger.ledger.records import GENESIS_HASH, PendingEvent
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

THRESHOLD = 512
_blobs = st.one_of(st.binary(max_size=64), st.binary(min_size=THRESHOLD, max_size=THRESHOLD + 64))
_kinds = st.sampled_from(["episode-finished", "feedback-published", "note"])
_visibility = st.sampled_from(["public", "host"])


class _Abort(Exception):
    """Raised inside a transaction to roll it back."""


class LedgerMachine(RuleBasedStateMachine):
    digests = Bundle("digests")

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ledger-stateful-"))
        self.ledger = Ledger.create(self.tmp / "run", large_threshold=THRESHOLD)
        self.events: list[tuple[str, str, bytes]] = []  # (kind, visibility, payload)
        self.objects: dict[str, bytes] = {}
        self.evicted: set[str] = set()

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- rules -------------------------------------------------------------------------------------
    @rule(target=digests, data=_blobs)
    def put(self, data: bytes) -> str:
        digest = self.ledger.objects.put(data)
        assert digest == digest_of(data)
        self.objects[digest] = data
        self.evicted.discard(digest)
        return digest

    @rule(
        kinds=st.lists(st.tuples(_kinds, _visibility, st.integers(0, 9)), min_size=1, max_size=5),
        refs=st.lists(digests, max_size=2),
    )
    def append(self, kinds: list[tuple[str, str, int]], refs: list[str]) -> None:
        batch = [
            PendingEvent(kind, 1, vis, canonical_json({"n": n, "artifact_digests": refs}))  # type: ignore[arg-type]
            for kind, vis, n in kinds
        ]
        stored = self.ledger.append_records(batch, expected_head=self.ledger.head().hash)
        assert [e.seq for e in stored] == list(range(len(self.events), len(self.events) + len(batch)))
        self.events.extend((e.kind, e.visibility, e.payload) for e in batch)

    @precondition(lambda self: len(self.events) > 0)
    @rule()
    def stale_append_is_refused(self) -> None:
        with pytest.raises(ConcurrencyError):
            self.ledger.append_records([PendingEvent("note", 1, "public", b"{}")], expected_head=GENESIS_HASH)

    @rule(digest=digests)
    def evict(self, digest: str) -> None:
        with self.ledger.transaction():
            self.ledger.objects.evict(digest)
            payload = canonical_json({"digests": [digest]})
            self.ledger.append_records([PendingEvent("bulk-evicted", 1, "public", payload)])
        self.events.append(("bulk-evicted", "public", payload))
        self.evicted.add(digest)

    @rule(data=_blobs)
    def aborted_transaction_changes_nothing(self, data: bytes) -> None:
        new = digest_of(data) not in self.objects
        digest = digest_of(data)

        def put_append_and_abort() -> None:
            with self.ledger.transaction():
                self.ledger.objects.put(data)
                self.ledger.append_records([PendingEvent("note", 1, "host", canonical_json({"x_digest": digest}))])
                raise _Abort

        with pytest.raises(_Abort):
            put_append_and_abort()
        if new:
            assert self.ledger.objects.state(digest) is None

    @rule(writable=st.booleans())
    def reopen(self, writable: bool) -> None:
        self.ledger.close()
        if not writable:
            with Ledger.open(self.tmp / "run", large_threshold=THRESHOLD) as reader:
                self.check_reads(reader)
        self.ledger = Ledger.open(self.tmp / "run", writable=True, large_threshold=THRESHOLD)

    @rule(
        from_seq=st.integers(0, 30),
        visibility=st.none() | _visibility,
        kinds=st.none() | st.frozensets(_kinds | st.just("bulk-evicted")),
    )
    def filtered_read(self, from_seq: int, visibility: str | None, kinds: frozenset[str] | None) -> None:
        got = [
            (e.seq, e.kind, e.visibility, e.payload)
            for e in self.ledger.records(from_seq, visibility=visibility, kinds=kinds)
        ]
        want = [
            (seq, k, v, p)
            for seq, (k, v, p) in enumerate(self.events)
            if seq >= from_seq and (visibility is None or v == visibility) and (kinds is None or k in kinds)
        ]
        assert got == want

    # -- invariants --------------------------------------------------------------------------------
    def check_reads(self, ledger: Ledger) -> None:
        rows = list(ledger.records())
        assert [(e.kind, e.visibility, e.payload) for e in rows] == self.events
        assert [e.seq for e in rows] == list(range(len(self.events)))
        assert ledger.head().count == len(self.events)
        for digest, data in self.objects.items():
            if digest in self.evicted:
                with pytest.raises(ObjectEvictedError):
                    ledger.objects.get(digest)
            else:
                assert ledger.objects.get(digest) == data

    @invariant()
    def reads_equal_the_model_and_verify_is_ok(self) -> None:
        self.check_reads(self.ledger)
        report = verify(self.ledger)
        assert report.ok, report.problems
        assert report.events_checked == len(self.events)
        assert report.objects_checked == len(self.objects)


LedgerMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestLedgerMachine = LedgerMachine.TestCase
