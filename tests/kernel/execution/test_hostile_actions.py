"""Actions the wire cannot carry are the Policy's fault, decided in the Policy process, never an infra fault.

Each value goes through the real ``evaluate()`` (snapshot, plan, a real LocalExecutor, the ledger): a
Policy returning ``np.longdouble``, an exotic numpy scalar, an object whose conversion recurses or lies,
a huge or deep structure, or a mixture of those inside ordinary containers, ends every Episode as a
Policy failure that is recorded (charged), and no ``infra-fault`` Event is ever written for it. Before
the fix, ``np.longdouble(1.5)`` crashed the worker and was refunded as an infra fault.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor, PolicyLimits
from evoledger.kernel.execution.action_wire import InvalidActionValue, decode_action, encode_action
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import EncodingError
from evoledger.ledger.events import EpisodeFinished, InfraFault
from evoledger.ledger.store import Ledger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LIMITS = PolicyLimits(act_timeout_seconds=10.0, make_policy_timeout_seconds=10.0)
POLICY_FAILURES = {"invalid_action", "protocol_error"}

HELPERS = """
import enum
import numpy as np


class Recurse:
    def __array__(self, *args, **kwargs):
        return np.asarray(self)


class RaisingIndex:
    def __index__(self):
        raise RuntimeError("no index")

    def __float__(self):
        return self.__float__()


class LongLen(list):
    def __len__(self):
        raise RuntimeError("no len")


class ExitingArray:
    def __array__(self, *args, **kwargs):
        raise SystemExit(3)


class LiesAboutClass:
    @property
    def __class__(self):
        return int


def deep(levels):
    value = 0
    for _ in range(levels):
        value = [value]
    return value
"""

HOSTILE = {
    "longdouble": "np.longdouble(1.5)",
    "longdouble_one": "np.longdouble(1)",
    "clongdouble": "np.clongdouble(1)",
    "longdouble_array": "np.array([1.5, 0.5], dtype=np.longdouble)",
    "object_array": "np.array([1, 2], dtype=object)",
    "object_scalar_array": "np.array(None, dtype=object)",
    "complex": "np.complex128(1)",
    "datetime": "np.datetime64('2020')",
    "void": "np.void(b'ab')",
    "bytes": "b'ab'",
    "big_int": "10**100",
    "surrogate": "'\\ud800'",
    "recursing_array": "Recurse()",
    "raising_index": "RaisingIndex()",
    "raising_len": "LongLen([1])",
    "exiting_array": "ExitingArray()",
    "lying_class": "LiesAboutClass()",
    "deep": "deep(100_000)",
    "huge_list": "[0] * 5_000_000",
    "huge_array": "np.zeros(5_000_000)",
    "object": "object()",
    "set": "{1, 2}",
    "object_key": "{object(): 1}",
}
"""Named hostile actions (Python source evaluated in the Policy process)."""

BENIGN = ["1", "0.5", "True", "None", "np.float32(0.5)", "np.int64(2)", "np.array([0.5, -0.5], dtype=np.float32)"]


def _program(root: Path, expression: str) -> Path:
    program = root / f"program-{abs(hash(expression)):x}"
    program.mkdir(parents=True, exist_ok=True)
    (program / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (program / "policy.py").write_text(
        "from helpers import *\n\n\nclass _Policy:\n    def act(self, observation):\n"
        f"        return {expression}\n\n\ndef make_policy(context):\n    return _Policy()\n",
        encoding="utf-8",
    )
    return program


@pytest.fixture(scope="module")
def executors() -> Iterator[dict[str, LocalExecutor]]:
    names = ("toy-counter", "toy-continuous")
    with LocalExecutor(BenchmarkRef(name=names[0])) as first, LocalExecutor(BenchmarkRef(name=names[1])) as second:
        yield dict(zip(names, (first, second), strict=True))


def _evaluate_hostile(root: Path, expression: str, bench_name: str, executor: LocalExecutor) -> None:
    """Evaluate a Policy returning ``expression``: every Episode a recorded Policy failure, no infra fault."""
    record = root / f"record-{bench_name}-{abs(hash(expression)):x}"
    result = evaluate(
        _program(root, expression),
        bench_name,
        config=EvaluationConfig(episodes=2, limits=LIMITS),
        record_to=record,
        executor=executor,
    )
    statuses = {e.status for e in result.episodes}
    assert statuses <= POLICY_FAILURES, (expression, [(e.status, e.failure) for e in result.episodes])
    with Ledger.open(record) as ledger:
        events = [r.event for r in ledger.events()]
    assert not [e for e in events if isinstance(e, InfraFault)], expression
    finished = [e for e in events if isinstance(e, EpisodeFinished)]
    assert len(finished) == 2  # recorded: the Episodes counted
    assert all(e.failure is not None for e in finished)


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("bench_name", ["toy-counter", "toy-continuous"])
def test_a_hostile_action_is_the_policys_failure(
    name: str, bench_name: str, executors: dict[str, LocalExecutor], tmp_path: Path
) -> None:
    _evaluate_hostile(tmp_path, HOSTILE[name], bench_name, executors[bench_name])


def test_the_refusal_names_the_type(executors: dict[str, LocalExecutor], tmp_path: Path) -> None:
    result = evaluate(
        _program(tmp_path, HOSTILE["longdouble"]),
        "toy-counter",
        config=EvaluationConfig(episodes=1, limits=LIMITS),
        executor=executors["toy-counter"],
    )
    (episode,) = result.episodes
    assert episode.status == "invalid_action"
    assert "numpy.longdouble" in str(episode.failure)


def _containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(children, min_size=1, max_size=3).map(lambda items: "(" + ", ".join(items) + ",)"),
        st.lists(children, min_size=1, max_size=3).map(
            lambda items: "{" + ", ".join(f"'k{i}': {v}" for i, v in enumerate(items)) + "}"
        ),
    )


@st.composite
def hostile_actions(draw: st.DrawFn) -> str:
    """An action expression holding at least one hostile value somewhere inside ordinary containers."""
    hostile = draw(st.sampled_from(sorted(set(HOSTILE) - {"huge_list", "huge_array", "deep"})).map(HOSTILE.get))
    tree = draw(st.recursive(st.sampled_from(BENIGN), _containers, max_leaves=6))
    # Put the hostile value next to the benign tree inside a container, or alone.
    shape = draw(st.sampled_from(["alone", "list", "tuple", "dict"]))
    if shape == "alone":
        return str(hostile)
    pair = draw(st.permutations([str(hostile), tree]))
    if shape == "list":
        return f"[{pair[0]}, {pair[1]}]"
    if shape == "tuple":
        return f"({pair[0]}, {pair[1]})"
    return f"{{'a': {pair[0]}, 'b': {pair[1]}}}"


_counter = itertools.count()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expression=hostile_actions(), bench_name=st.sampled_from(["toy-counter", "toy-continuous"]))
def test_hostile_values_inside_any_structure_are_policy_failures(
    expression: str, bench_name: str, executors: dict[str, LocalExecutor], tmp_path: Path
) -> None:
    _evaluate_hostile(tmp_path / str(next(_counter)), expression, bench_name, executors[bench_name])


RAW_FRAMES = {
    # A Policy may bypass its runtime and write frames to its channel itself: the worker re-checks everything.
    "longdouble_scalar": b"g\x04<f16" + bytes(16),
    "big_int": b"I\x1e\x00\x00\x00" + b"1" * 30,
    "bytes": b"b\x01\x00\x00\x00x",
    "surrogate": b"s\x03\x00\x00\x00\xed\xa0\x80",
    "truncated": b"a\x03<f8\x01" + bytes(3),
    "unknown_tag": b"Z",
}


@pytest.mark.parametrize("name", sorted(RAW_FRAMES))
def test_the_worker_refuses_what_the_policy_process_wrote_itself(name: str) -> None:
    with pytest.raises(EncodingError):
        decode_action(RAW_FRAMES[name])


def test_a_raw_frame_from_the_policy_is_a_protocol_error(executors: dict[str, LocalExecutor], tmp_path: Path) -> None:
    frame = b"A" + RAW_FRAMES["surrogate"]
    expression = (
        f"__import__('os').write(4, len({frame!r}).to_bytes(4, 'little') + {frame!r}) and __import__('time').sleep(30)"
    )
    _evaluate_hostile(tmp_path, expression, "toy-counter", executors["toy-counter"])


def test_allowed_actions_round_trip_as_plain_types() -> None:
    import enum

    import numpy as np

    class Move(enum.IntEnum):
        LEFT = 1

    class Ratio(float):
        def __float__(self) -> float:
            raise RuntimeError("never called")

    class Tagged(np.ndarray):
        def tobytes(self, *args: Any, **kwargs: Any) -> bytes:
            raise RuntimeError("never called")

    tagged = np.array([0.25, 0.5]).view(Tagged)
    value = [Move.LEFT, Ratio(0.5), np.float16(1.5), {"k": (np.array([1, 2], dtype=np.uint8), None)}, tagged]
    decoded = decode_action(encode_action(value))
    assert type(decoded[4]) is np.ndarray  # a subclass is converted in the Policy process, never sent as one
    assert decoded[4].tolist() == [0.25, 0.5]
    assert decoded[:2] == [1, 0.5]
    assert (type(decoded[0]), type(decoded[1])) == (int, float)
    assert decoded[2] == np.float16(1.5)
    assert decoded[3]["k"][0].dtype == np.uint8
    with pytest.raises(InvalidActionValue, match=r"numpy\.longdouble"):
        encode_action(np.longdouble(1))
