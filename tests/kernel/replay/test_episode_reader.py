"""The pydantic-free reader of ``episode-finished`` payloads accepts only what the model accepts, to the same values."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from evoledger.kernel.replay.episode_reader import read_finished_episode
from evoledger.ledger.canonical import canonical_json, parse_canonical
from evoledger.ledger.errors import SchemaError
from evoledger.ledger.events import EpisodeFinished, EventBase, SubmissionAccepted, from_stored
from evoledger.ledger.records import StoredEvent
from evoledger.projections import mirror, run_state
from hypothesis import given, settings
from hypothesis import strategies as st

_DIGEST = "sha256:" + "ab" * 32
_OK: dict[str, Any] = {
    "attempt": 1,
    "duration_ms": None,
    "episode_return": 18.0,
    "evaluation_id": None,
    "failure": None,
    "index": 38,
    "metrics": {},
    "policy_log_digest": None,
    "split": "train",
    "status": "ok",
    "steps": 18,
    "submission_id": "submission-000001",
    "terminated": True,
    "trajectory_digest": _DIGEST,
    "truncated": False,
}
_FAILED = _OK | {
    "status": "timeout",
    "failure": {"code": "timeout", "message": "too slow", "traceback_digest": _DIGEST},
    "policy_log_digest": _DIGEST,
    "metrics": {"success": False, "distance": 0.25, "note": "x", "n": 3, "none": None},
    "duration_ms": 12,
    "attempt": 2,
}
_EVALUATION = _OK | {"submission_id": None, "evaluation_id": "evaluation-a.b_c", "split": "assessment"}
_BASELINES = [_OK, _FAILED, _EVALUATION]

_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        -1,
        7,
        2**63,
        2**64 + 5,
        10**30,
        0.0,
        -0.0,
        1.5,
        18.0,
        1e300,
        float(2**63),
        float(2**62),
        "",
        "ok",
        "train",
        "validation",
        "exception",
        "timeout",
        "memory",
        "submission-000001",
        "submission-000001\n",
        "submission-12",
        "evaluation-x",
        "evaluation-",
        _DIGEST,
        "sha256:" + "AB" * 32,
        _DIGEST + "\n",
        "é",
        "x" * 65537,
        {},
        {"a": 1},
        {"a": {"b": 1}},
        {"a": [1]},
        {"a": 10**30},
        {"é": 1},
        {"a": "é"},
        {"a": 1e300},
        [],
        [1],
        {"code": "exception", "message": "m", "traceback_digest": None},
        {"code": "timeout", "message": "m", "traceback_digest": _DIGEST},
        {"code": "timeout", "message": "m"},
        {"code": "timeout", "message": "é", "traceback_digest": None},
        {"code": "timeout", "message": 1, "traceback_digest": None},
        {"code": "timeout", "message": "m", "traceback_digest": None, "extra": 1},
        {"code": "ok", "message": "m", "traceback_digest": None},
    ]
)
_BAD_DIGESTS = [_DIGEST, "sha256:" + "AB" * 32, _DIGEST + "\n", "sha256:ab", None, 1]
_FAILURE = st.fixed_dictionaries(
    {
        "code": st.sampled_from(["ok", "exception", "timeout", "memory", "bogus", 1]),
        "message": st.sampled_from(["m", "", "é", "x" * 65536, "x" * 65537, 1, None]),
        "traceback_digest": st.sampled_from(_BAD_DIGESTS),
    },
    optional={"extra": st.just(1)},
)
_PER_KEY: dict[str, st.SearchStrategy[Any]] = {
    "attempt": st.sampled_from([0, 1, 2, -1, True, 1.0, None]),
    "duration_ms": st.sampled_from([None, 0, -1, 5, 1.0, True]),
    "episode_return": st.sampled_from([0.0, -0.0, 1.5, 18, 1e300, -1e300, 10**30, float(2**63), True, None]),
    "evaluation_id": st.sampled_from(
        [None, "evaluation-x", "evaluation-", "evaluation-" + "a" * 64, "evaluation-" + "a" * 65, "evaluation-é"]
    ),
    "failure": st.one_of(st.none(), _FAILURE),
    "index": st.sampled_from([0, -1, 5, True, 5.0, 2**64 + 1, None]),
    "metrics": st.dictionaries(st.sampled_from(["a", "é", "x_digest"]), _VALUES, max_size=3),
    "policy_log_digest": st.sampled_from(_BAD_DIGESTS),
    "split": st.sampled_from(["train", "validation", "assessment", "bogus", None]),
    "status": st.sampled_from(["ok", "exception", "timeout", "memory", "bogus", None]),
    "steps": st.sampled_from([0, -1, 3, True, 3.0, None]),
    "submission_id": st.sampled_from(
        ["submission-000001", "submission-00001", "submission-0000001", "submission-000001\n", None, 1]
    ),
    "terminated": st.sampled_from([True, False, 0, 1, None]),
    "truncated": st.sampled_from([True, False, 0, 1, None]),
    "trajectory_digest": st.sampled_from(_BAD_DIGESTS),
}
_KEYS = st.sampled_from([*sorted(_OK), "kind", "version", "extra"])
_EDIT = _KEYS.flatmap(
    lambda key: st.tuples(st.just(key), st.one_of(st.just("<delete>"), _PER_KEY.get(key, _VALUES), _VALUES))
)
_EDITS = st.lists(_EDIT, max_size=4)


def _model(payload: bytes) -> EpisodeFinished | None:
    try:
        event = from_stored(StoredEvent(0, "episode-finished", 1, "public", payload, "", "", ""))
    except SchemaError:
        return None
    assert isinstance(event, EpisodeFinished)
    return event


def _as_audited(payload: bytes) -> Any:
    """The dict the protocol audit hands on: orjson, or the canonical parser when orjson refuses."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return parse_canonical(payload)


def _agree(payload: bytes) -> bool:
    """Assert the reader agrees with the model on ``payload``; whether the reader accepted it."""
    data = _as_audited(payload)
    fast = read_finished_episode(data) if isinstance(data, dict) else None
    model = _model(payload)
    if fast is None:
        return False
    assert model is not None, payload
    event, digests = fast
    assert event == model
    assert event.model_dump() == model.model_dump()
    assert event.model_fields_set == model.model_fields_set
    assert type(event.failure) is type(model.failure)
    # the projections fold it exactly as the validated Event (after its Submission's acceptance)
    before: list[EventBase] = []
    if model.submission_id is not None:
        before.append(
            SubmissionAccepted(
                submission_id=model.submission_id,
                program_digest=_DIGEST,
                episodes=(model.index,),
                budget_before=1,
                budget_after=0,
                submissions_used=1,
            )
        )
    assert run_state.fold([*before, event]) == run_state.fold([*before, model])
    assert mirror.fold([*before, event]) == mirror.fold([*before, model])
    failure = model.failure.traceback_digest if model.failure is not None else None
    assert digests == tuple(d for d in (model.trajectory_digest, model.policy_log_digest, failure) if d is not None)
    return True


@pytest.mark.parametrize("baseline", _BASELINES, ids=["ok", "failed", "evaluation"])
def test_valid_payloads_are_read_without_pydantic(baseline: dict[str, Any]) -> None:
    assert _agree(canonical_json(baseline))


@given(st.sampled_from(_BASELINES), _EDITS)
@settings(max_examples=400, deadline=None)
def test_whatever_the_reader_accepts_the_model_accepts_with_the_same_values(
    baseline: dict[str, Any], edits: list[tuple[str, Any]]
) -> None:
    data = dict(baseline)
    for key, value in edits:
        if value == "<delete>":
            data.pop(key, None)
        else:
            data[key] = value
    try:
        payload = canonical_json(data)
    except Exception:  # a value canonical JSON refuses cannot be stored at all
        return
    _agree(payload)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'{"attempt":2,', b'{"index":5,"attempt":2,'),  # a repeated key: both parsers keep the last
        (b'"index":38', b'"index" : 38'),  # not canonical, still JSON
        (b'"too slow"', b'"too \\ud800slow"'),  # a lone surrogate: orjson refuses it, pydantic too
        (b'"too slow"', b'"too \\u0073low"'),  # an escape that decodes to ASCII
        (b'"episode_return":18.0', b'"episode_return":123456789012345678901234567890'),
        (b'"note":"x"', b'"note":"\\udc00"'),  # a lone surrogate in metrics
        (b'"note":"x"', b'"\\udc00":"x"'),  # a lone surrogate in a metrics key
        (b'"n":3', b'"n":123456789012345678901234567890'),  # orjson widens it to a float, pydantic keeps the int
    ],
)
def test_raw_payload_oddities_agree_with_the_model(old: bytes, new: bytes) -> None:
    payload = canonical_json(_FAILED | {"index": 38, "episode_return": 18.0}).replace(old, new)
    assert payload != canonical_json(_FAILED)
    _agree(payload)


_FAILURE_OF = {"code": "timeout", "message": "m", "traceback_digest": None}


@pytest.mark.parametrize(
    ("baseline", "edit"),
    [
        (_OK, {"failure": _FAILURE_OF | {"code": "ok"}}),
        (_FAILED, {"failure": _FAILURE_OF | {"message": "x" * 65537}}),
        (_FAILED, {"failure": _FAILURE_OF | {"message": "x" * 65536}}),
        (_FAILED, {"failure": _FAILURE_OF | {"extra": 1}}),
        (_FAILED, {"failure": {"code": "timeout", "message": "m"}}),
        (_FAILED, {"metrics": {"big": 2**64 + 5}}),
        (_FAILED, {"metrics": {"big": 10**30}}),
        (_FAILED, {"metrics": {"big": 2**63 - 1, "small": -(2**63)}}),
        (_OK, {"attempt": 0}),
        (_OK, {"steps": -1}),
        (_OK, {"index": -1}),
        (_OK, {"duration_ms": -1}),
        (_EVALUATION, {"split": "bogus"}),
        (_OK, {"split": "validation"}),
        (_OK, {"submission_id": None}),
    ],
)
def test_boundaries_agree_with_the_model(baseline: dict[str, Any], edit: dict[str, Any]) -> None:
    _agree(canonical_json(baseline | edit))


def test_what_the_model_refuses_or_converts_is_left_to_the_model() -> None:
    refused = [
        _OK | {"status": "exception"},
        _OK | {"steps": True},
        _OK | {"submission_id": "submission-000001\n"},
        _FAILED | {"failure": {"code": "exception", "message": "m", "traceback_digest": None}},
        _OK | {"evaluation_id": "evaluation-x"},
        _OK | {"kind": "episode-finished"},
    ]
    for data in refused:
        assert read_finished_episode(data) is None
        assert _model(canonical_json(data)) is None
    converted = [_OK | {"episode_return": 18}, {k: v for k, v in _OK.items() if k != "attempt"}]
    for data in converted:  # an int return becomes a float, a missing default is filled in: pydantic decides
        assert read_finished_episode(data) is None
        assert _model(canonical_json(data)) is not None
