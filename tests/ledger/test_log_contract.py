"""One contract, two backends: every EventLog behaviour is checked on SQLite and in memory."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import ConcurrencyError, EncodingError, InputError
from evoledger.ledger.head import Head
from evoledger.ledger.log import EventLog
from evoledger.ledger.memory import MemoryEventLog
from evoledger.ledger.records import GENESIS_HASH, PendingEvent
from evoledger.ledger.store import Ledger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def _clock() -> datetime:
    return T0


def ev(kind: str = "episode-finished", visibility: str = "public", **payload: object) -> PendingEvent:
    return PendingEvent(kind, 1, visibility, canonical_json(payload))  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventLog]:
    if request.param == "memory":
        yield MemoryEventLog(clock=_clock)
    else:
        ledger = Ledger.create(tmp_path / "run", clock=_clock)
        yield ledger.log
        ledger.close()


def test_empty_log_head_is_genesis(log: EventLog) -> None:
    assert log.head() == Head(GENESIS_HASH, 0)
    assert list(log.read()) == []


def test_append_chains_rows_from_seq_zero(log: EventLog) -> None:
    stored = log.append([ev(n=1), ev(n=2), ev("run-ended", "host", reason="done")], expected_head=GENESIS_HASH)
    assert [e.seq for e in stored] == [0, 1, 2]
    assert stored[0].prev_hash == GENESIS_HASH
    assert [e.prev_hash for e in stored[1:]] == [e.hash for e in stored[:-1]]
    assert all(e.hash == e.expected_hash() for e in stored)
    assert all(e.recorded_at == "2024-05-01T12:00:00.123456Z" for e in stored)
    assert stored[2].visibility == "host"
    assert stored[2].data() == {"reason": "done"}
    assert log.head() == Head(stored[-1].hash, 3)
    assert list(log.read()) == stored


def test_appends_continue_the_chain(log: EventLog) -> None:
    first = log.append([ev(n=1)], expected_head=GENESIS_HASH)
    second = log.append([ev(n=2), ev(n=3)], expected_head=first[-1].hash)
    assert [e.seq for e in second] == [1, 2]
    assert second[0].prev_hash == first[0].hash
    assert list(log.read()) == first + second


def test_empty_batch_appends_nothing_but_checks_the_head(log: EventLog) -> None:
    assert log.append([], expected_head=GENESIS_HASH) == []
    log.append([ev()], expected_head=GENESIS_HASH)
    with pytest.raises(ConcurrencyError):
        log.append([], expected_head=GENESIS_HASH)


def test_stale_expected_head_raises_and_appends_nothing(log: EventLog) -> None:
    log.append([ev(n=1)], expected_head=GENESIS_HASH)
    with pytest.raises(ConcurrencyError, match="stale expected head") as info:
        log.append([ev(n=2)], expected_head=GENESIS_HASH)
    assert "after 1 events" in str(info.value)
    assert log.head().count == 1


@pytest.mark.parametrize("bad", [None, "", "latest", "sha256:" + "0" * 63, 7])
def test_expected_head_is_required_and_well_formed(log: EventLog, bad: object) -> None:
    with pytest.raises(InputError, match="there is no 'don't care' value"):
        log.append([ev()], expected_head=bad)  # type: ignore[arg-type]
    assert log.head().count == 0


def test_expected_head_is_keyword_only(log: EventLog) -> None:
    with pytest.raises(TypeError):
        log.append([ev()], GENESIS_HASH)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        log.append([ev()])  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "payload",
    [
        b'{"b":1,"a":2}',  # unsorted keys
        b'{"a": 1}',  # whitespace
        b' {"a":1}',  # leading whitespace
        b'{"a":1}\n',  # trailing newline
        b'{"a":1}{"b":2}',  # two values
        b'{"a":"\\u00e9"}',  # escaped non-ASCII
        b'{"a":1.0e3}',  # non-repr float
        b'{"a":NaN}',  # NaN literal
        b'{"a":1,"a":2}',  # duplicate key
        b"not json",
        b"\xff\xfe",
        b"",
    ],
)
def test_non_canonical_payload_is_rejected_and_batch_is_atomic(log: EventLog, payload: bytes) -> None:
    batch = [ev(n=1), PendingEvent("x", 1, "public", payload), ev(n=3)]
    with pytest.raises(EncodingError):
        log.append(batch, expected_head=GENESIS_HASH)
    assert log.head().count == 0
    assert list(log.read()) == []


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (PendingEvent("x", 1, "private", b"{}"), "visibility 'private'"),  # type: ignore[arg-type]
        (PendingEvent("", 1, "public", b"{}"), "kind must be"),
        (PendingEvent("a\x00b", 1, "public", b"{}"), "kind must be"),
        (PendingEvent("x", -1, "public", b"{}"), "non-negative int"),
        (PendingEvent("x", True, "public", b"{}"), "non-negative int"),
        (PendingEvent("x", 1, "public", "{}"), "must be canonical JSON bytes"),  # type: ignore[arg-type]
        (PendingEvent("x", 1, ["public"], b"{}"), "visibility"),  # type: ignore[arg-type]
        ({"kind": "x"}, "takes PendingEvent"),
    ],
)
def test_invalid_event_is_rejected_and_batch_is_atomic(log: EventLog, event: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        log.append([ev(n=1), event], expected_head=GENESIS_HASH)  # type: ignore[list-item]
    assert log.head().count == 0


def test_read_from_seq_and_filters(log: EventLog) -> None:
    batch = [
        ev("a", "public", i=0),
        ev("b", "host", i=1),
        ev("a", "host", i=2),
        ev("c", "public", i=3),
        ev("b", "public", i=4),
    ]
    stored = log.append(batch, expected_head=GENESIS_HASH)
    assert list(log.read(2)) == stored[2:]
    assert list(log.read(5)) == []
    assert list(log.read(99)) == []
    assert [e.seq for e in log.read(visibility="public")] == [0, 3, 4]
    assert [e.seq for e in log.read(visibility="host")] == [1, 2]
    assert [e.seq for e in log.read(kinds={"a", "c"})] == [0, 2, 3]
    assert [e.seq for e in log.read(1, visibility="public", kinds=["b", "a"])] == [4]
    assert list(log.read(kinds=())) == []


def test_read_streams_many_events_in_order(log: EventLog) -> None:
    head = GENESIS_HASH
    for start in range(0, 5000, 1000):
        stored = log.append([ev(i=i) for i in range(start, start + 1000)], expected_head=head)
        head = stored[-1].hash
    events = log.read(1500)
    first = next(events)
    assert first.seq == 1500
    rest = list(events)
    assert [e.seq for e in rest] == list(range(1501, 5000))
    assert [e.data()["i"] for e in rest[-3:]] == [4997, 4998, 4999]
    assert log.head() == Head(head, 5000)


def test_read_sees_events_appended_while_iterating(log: EventLog) -> None:
    first = log.append([ev(i=0)], expected_head=GENESIS_HASH)
    reader = log.read()
    assert next(reader).seq == 0
    log.append([ev(i=1)], expected_head=first[0].hash)
    assert [e.seq for e in reader] == [1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"from_seq": -1}, "from_seq must be"),
        ({"from_seq": "0"}, "from_seq must be"),
        ({"visibility": "private"}, "visibility must be"),
        ({"visibility": ["public"]}, "visibility must be"),
        ({"kinds": "episode-finished"}, "kinds must be a collection"),
        ({"kinds": [1]}, "kinds must hold strings"),
    ],
)
def test_read_rejects_bad_arguments_eagerly(log: EventLog, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        log.read(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("moment", [datetime(2024, 1, 1), "2024-01-01"])
def test_clock_must_return_an_aware_datetime(tmp_path: Path, moment: object) -> None:
    memory = MemoryEventLog(clock=lambda: moment)  # type: ignore[arg-type,return-value]
    with Ledger.create(tmp_path / "r", clock=lambda: moment) as ledger:  # type: ignore[arg-type,return-value]
        for log in (memory, ledger.log):
            with pytest.raises(InputError, match="timezone-aware datetime"):
                log.append([ev()], expected_head=GENESIS_HASH)
            assert log.head().count == 0


def test_recorded_at_is_converted_to_utc(log: EventLog) -> None:
    plus2 = timezone(timedelta(hours=2))
    if isinstance(log, MemoryEventLog):
        log = MemoryEventLog(clock=lambda: datetime(2024, 1, 1, 14, 0, tzinfo=plus2))
    else:
        log._clock = lambda: datetime(2024, 1, 1, 14, 0, tzinfo=plus2)  # type: ignore[attr-defined]
    [stored] = log.append([ev()], expected_head=GENESIS_HASH)
    assert stored.recorded_at == "2024-01-01T12:00:00.000000Z"


def test_default_clock_is_real_utc(tmp_path: Path) -> None:
    before = datetime.now(UTC)
    [stored] = MemoryEventLog().append([ev()], expected_head=GENESIS_HASH)
    recorded = datetime.strptime(stored.recorded_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before <= recorded <= datetime.now(UTC)


def test_both_backends_build_the_same_chain(tmp_path: Path) -> None:
    batch = [ev("k", "host", x=[1, 2.5, None, "é"]), ev("k2", "public"), ev(i=3)]
    memory = MemoryEventLog(clock=_clock).append(batch, expected_head=GENESIS_HASH)
    with Ledger.create(tmp_path / "r", clock=_clock) as ledger:
        sqlite = ledger.log.append(batch, expected_head=GENESIS_HASH)
    assert memory == sqlite


# -- the chain hash is a pure function of the content: the same in another process ----------------

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_pending = st.builds(
    PendingEvent,
    kind=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20),
    version=st.integers(0, 1000),
    visibility=st.sampled_from(["public", "host"]),
    payload=_json.map(canonical_json),
)

_CHILD = """
import json, sys, tempfile
from datetime import UTC, datetime
from evoledger.ledger.records import GENESIS_HASH, PendingEvent
from evoledger.ledger.store import Ledger
with tempfile.TemporaryDirectory() as tmp:
    for n, line in enumerate(sys.stdin):
        events = [PendingEvent(e["kind"], e["version"], e["visibility"], bytes.fromhex(e["payload"]))
                  for e in json.loads(line)]
        with Ledger.create(f"{tmp}/r{n}", clock=lambda: datetime.now(UTC)) as ledger:
            hashes = [e.hash for e in ledger.log.append(events, expected_head=GENESIS_HASH)]
        print(json.dumps(hashes), flush=True)
"""


def test_chain_hash_is_stable_across_processes() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    assert child.stdin is not None
    assert child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_pending, min_size=1, max_size=12))
    def same_hashes_in_child(events: list[PendingEvent]) -> None:
        here = [e.hash for e in MemoryEventLog().append(events, expected_head=GENESIS_HASH)]
        spec = [
            {"kind": e.kind, "version": e.version, "visibility": e.visibility, "payload": e.payload.hex()}
            for e in events
        ]
        stdin.write(json.dumps(spec) + "\n")
        stdin.flush()
        assert json.loads(stdout.readline()) == here

    try:
        same_hashes_in_child()
    finally:
        stdin.close()
        child.wait(timeout=30)
        stdout.close()
    assert child.returncode == 0
