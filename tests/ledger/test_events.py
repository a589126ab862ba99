"""The Event schema: round trips through log rows, strictness, visibility, golden bytes, Object references."""

from __future__ import annotations

import hashlib
import math
import re
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of, is_digest, parse_canonical
from evoledger.ledger.errors import EncodingError, SchemaError, UnknownNameError
from evoledger.ledger.events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    AgentExited,
    AgentStarted,
    AgentTranscript,
    ArtifactRef,
    AssessmentFinished,
    BenchmarkIdentity,
    BulkEvicted,
    CandidateScore,
    CandidateSelected,
    EpisodeFailure,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    EvaluationFinished,
    EvaluationStarted,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    InfraFaultDetail,
    ProgramSnapshotted,
    RequestFailed,
    RunCreated,
    RunEnded,
    RunKey,
    Signer,
    SubmissionAccepted,
    SubmissionRejected,
    SweepCell,
    SweepCellEnded,
    SweepCellPlaced,
    SweepCellStarted,
    SweepCreated,
    ValidationEpisodeFinished,
    check_program_path,
    current_version,
    event_types,
    from_stored,
    is_reference_field,
    object_refs,
    payload_object_refs,
    to_pending,
    typed_object_refs,
    visibility_of,
)
from evoledger.ledger.records import GENESIS_HASH, PendingEvent, StoredEvent, Visibility, chain_hash
from evoledger.ledger.signing_keys import fingerprint_of
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

EXAMPLES = settings(max_examples=60, deadline=None)

# ---------------------------------------------------------------------------------------------------------
# Strategies: one per Event kind (coverage of EVENT_TYPES is asserted below).

digests = st.binary(max_size=6).map(digest_of)
finite = st.floats(allow_nan=False, allow_infinity=False)
counts = st.integers(min_value=0, max_value=2**53)
positives = st.integers(min_value=1, max_value=2**31)
indices = st.integers(min_value=0, max_value=10_000)
texts = st.text(max_size=30)
codes = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,12}", fullmatch=True)
submission_ids = st.integers(min_value=1, max_value=10**8).map(lambda n: f"submission-{n:06d}")
evaluation_ids = st.integers(min_value=1, max_value=10**8).map(lambda n: f"evaluation-{n:06d}")
splits = st.sampled_from(["train", "validation", "assessment"])
statuses = st.sampled_from(["ok", "exception", "timeout", "invalid_action", "protocol_error", "memory"])
_segments = st.text(alphabet="abcXYZ019._- é", min_size=1, max_size=6)
program_paths = (
    st.lists(_segments, min_size=1, max_size=3).map("/".join).filter(lambda p: check_program_path(p) is None)
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | finite | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
benchmarks = st.builds(BenchmarkIdentity.of, names, json_objects)
signers = st.none() | st.binary(min_size=32, max_size=32).map(lambda raw: Signer.of(raw.hex()))
sorted_unique_indices = st.lists(indices, min_size=1, max_size=8, unique=True).map(sorted)
cell_names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
sweep_cells = st.builds(
    SweepCell,
    name=cell_names,
    benchmark=names,
    settings=json_objects,
    agent=names,
    agent_options=json_objects,
    seed=st.integers(0, 2**63 - 1),
    run=json_objects,
)


@st.composite
def _owner(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"submission_id": draw(submission_ids), "split": "train"}
    return {"evaluation_id": draw(evaluation_ids), "split": draw(splits)}


@st.composite
def _outcome(draw: st.DrawFn) -> dict[str, Any]:
    status = draw(statuses)
    failure = None
    if status != "ok":
        failure = EpisodeFailure(code=status, message=draw(texts), traceback_digest=draw(st.none() | digests))  # type: ignore[arg-type]
    return {
        "status": status,
        "episode_return": draw(finite),
        "steps": draw(counts),
        "terminated": draw(st.booleans()),
        "truncated": draw(st.booleans()),
        "trajectory_digest": draw(digests),
        "policy_log_digest": draw(st.none() | digests),
        "failure": failure,
        "duration_ms": draw(counts),
    }


summaries = st.builds(
    EpisodeSummary,
    index=indices,
    status=statuses,
    episode_return=finite,
    steps=counts,
    trajectory_digest=digests,
)


@st.composite
def _program_snapshotted(draw: st.DrawFn) -> ProgramSnapshotted:
    files = draw(st.dictionaries(program_paths, digests, min_size=1, max_size=5))
    return ProgramSnapshotted(
        program_digest=draw(digests),
        files=files,
        entry_point=draw(st.sampled_from(sorted(files))),
        file_count=len(files),
        total_bytes=draw(counts),
        source=draw(st.sampled_from(["initial", "submission", "evaluation"])),
    )


@st.composite
def _submission_accepted(draw: st.DrawFn) -> SubmissionAccepted:
    episodes = draw(sorted_unique_indices)
    before = draw(st.integers(min_value=len(episodes), max_value=10**6))
    return SubmissionAccepted(
        submission_id=draw(submission_ids),
        program_digest=draw(digests),
        episodes=tuple(episodes),
        budget_before=before,
        budget_after=before - len(episodes),
        submissions_used=draw(positives),
    )


@st.composite
def _infra_fault(draw: st.DrawFn) -> InfraFault:
    owner = draw(_owner())
    affected = draw(sorted_unique_indices)
    refund = 0 if "evaluation_id" in owner else draw(st.integers(0, len(affected)))
    suspicious = refund == 0 and "submission_id" in owner and draw(st.booleans())
    return InfraFault(
        **owner, indices=tuple(affected), refunded_units=refund, reason=draw(texts), suspicious=suspicious
    )


@st.composite
def _feedback(draw: st.DrawFn) -> FeedbackPublished:
    artifact_names = draw(st.lists(program_paths, max_size=3, unique=True))
    artifacts = [
        ArtifactRef(
            name=name,
            media_type=draw(st.sampled_from(["application/json", "text/plain", "image/png"])),
            digest=draw(digests),
            size=draw(counts),
            retention=draw(st.sampled_from(["permanent", "bulk"])),
        )
        for name in artifact_names
    ]
    return FeedbackPublished(
        submission_id=draw(submission_ids),
        score=draw(st.none() | finite),
        content_digest=draw(digests),
        artifacts=tuple(artifacts),
        budget_used=draw(counts),
        budget_left=draw(counts),
    )


@st.composite
def _agent_exited(draw: st.DrawFn) -> AgentExited:
    by_signal = draw(st.booleans())
    return AgentExited(
        pid=draw(positives),
        attempt=draw(positives),
        exit_code=None if by_signal else draw(st.none() | st.integers(-255, 255)),
        signal=draw(st.integers(1, 64)) if by_signal else None,
        stdout_digest=draw(st.none() | digests),
        stderr_digest=draw(st.none() | digests),
        duration_ms=draw(counts),
        reason=draw(codes),
    )


@st.composite
def _candidate_selected(draw: st.DrawFn) -> CandidateSelected:
    ids = draw(st.lists(submission_ids, min_size=1, max_size=4, unique=True))
    scores = [
        CandidateScore(
            submission_id=sid,
            program_digest=draw(digests),
            score=draw(st.none() | finite),
            policy_failures=draw(counts),
            finish_position=position,
        )
        for position, sid in enumerate(ids, start=1)
    ]
    chosen = draw(st.sampled_from(scores))
    return CandidateSelected(
        submission_id=chosen.submission_id,
        program_digest=chosen.program_digest,
        scores=tuple(scores),
        tie_break=draw(texts),
    )


@st.composite
def _assessment(draw: st.DrawFn) -> AssessmentFinished:
    episodes = draw(st.lists(summaries, max_size=4))
    return AssessmentFinished(
        submission_id=draw(submission_ids),
        program_digest=draw(digests),
        score=draw(st.none() | finite),
        episode_count=len(episodes),
        episodes=tuple(episodes),
    )


@st.composite
def _evaluation_finished(draw: st.DrawFn) -> EvaluationFinished:
    episodes = draw(st.lists(summaries, max_size=4, unique_by=lambda s: s.index))
    return EvaluationFinished(
        evaluation_id=draw(evaluation_ids),
        score=draw(st.none() | finite),
        content_digest=draw(digests),
        episodes=tuple(episodes),
    )


def _with(build: Callable[..., EventBase], parts: st.SearchStrategy[dict[str, Any]], **fields: Any) -> Any:
    return st.tuples(parts, st.fixed_dictionaries(fields)).map(lambda pair: build(**pair[0], **pair[1]))


STRATEGIES: dict[type[EventBase], st.SearchStrategy[Any]] = {
    RunCreated: st.builds(
        RunCreated,
        run_id=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,15}", fullmatch=True),
        benchmark=benchmarks,
        episode_budget=positives,
        max_submissions=positives,
        finish_budget_policy=st.sampled_from(["allow_early", "require_budget_exhaustion"]),
        config=json_objects,
        pool_commitment=digests,
        seed=st.none() | st.integers(min_value=0, max_value=2**64),
        created_by=texts,
        signer=signers,
    ),
    RunKey: st.builds(RunKey, key=st.binary(min_size=32, max_size=32).map(bytes.hex)),
    ProgramSnapshotted: _program_snapshotted(),
    SubmissionAccepted: _submission_accepted(),
    SubmissionRejected: st.builds(
        SubmissionRejected, code=codes, message=texts, retryable=st.booleans(), request=json_objects
    ),
    EpisodePlanned: st.builds(
        EpisodePlanned,
        evaluation_id=st.none() | evaluation_ids,
        split=splits,
        index=indices,
        env_seed=counts,
        policy_seed=counts,
        scenario=json_objects,
    ),
    EpisodeStarted: _with(EpisodeStarted, _owner(), index=indices, attempt=positives),
    EpisodeFinished: _with(
        EpisodeFinished,
        st.tuples(_owner(), _outcome()).map(lambda p: {**p[0], **p[1]}),
        index=indices,
        attempt=positives,
    ),
    InfraFault: _infra_fault(),
    InfraFaultDetail: _with(InfraFaultDetail, _owner(), index=indices, message=texts),
    FeedbackPublished: _feedback(),
    BulkEvicted: st.builds(
        BulkEvicted,
        digests=st.lists(digests, min_size=1, max_size=4, unique=True),
        submission_ids=st.lists(submission_ids, max_size=3),
        reason=texts,
        bytes_freed=counts,
    ),
    FinishAccepted: st.builds(
        FinishAccepted,
        candidates=st.lists(submission_ids, min_size=1, max_size=4, unique=True),
        budget_left=counts,
    ),
    FinishRejected: st.builds(
        FinishRejected, code=codes, message=texts, retryable=st.booleans(), request=st.just({}) | json_objects
    ),
    RequestFailed: st.builds(
        RequestFailed,
        method=codes,
        request=json_objects,
        error_type=st.text(min_size=1, max_size=40),
        message=texts,
        traceback=texts,
    ),
    AgentStarted: st.builds(
        AgentStarted,
        agent=names,
        command=st.lists(texts, min_size=1, max_size=4),
        pid=positives,
        attempt=positives,
    ),
    AgentExited: _agent_exited(),
    AgentTranscript: st.builds(
        AgentTranscript,
        pid=positives,
        attempt=positives,
        format=names,
        transcript_digest=digests,
        messages=counts,
        tool_calls=counts,
        malformed_lines=counts,
        input_tokens=st.none() | counts,
        output_tokens=st.none() | counts,
        cost_usd=st.none() | st.floats(0, 1e6, allow_nan=False, allow_infinity=False),
    ),
    ValidationEpisodeFinished: _with(
        ValidationEpisodeFinished,
        _outcome(),
        submission_id=submission_ids,
        program_digest=digests,
        index=indices,
        attempt=positives,
    ),
    CandidateSelected: _candidate_selected(),
    AssessmentFinished: _assessment(),
    RunEnded: st.builds(
        RunEnded,
        reason=st.sampled_from(typing.get_args(RunEnded.model_fields["reason"].annotation)),
        selected_submission_id=st.none() | submission_ids,
        message=texts,
        summary=json_objects,
    ),
    EvaluationStarted: st.builds(
        EvaluationStarted,
        evaluation_id=evaluation_ids,
        benchmark=benchmarks,
        program_digest=digests,
        split=splits,
        episode_count=positives,
        seed=counts,
        config=json_objects,
        created_by=texts,
        signer=signers,
    ),
    EvaluationFinished: _evaluation_finished(),
    SweepCreated: st.builds(
        SweepCreated,
        sweep_id=cell_names,
        source_digest=digests,
        cells=st.lists(sweep_cells, min_size=1, max_size=3),
        created_by=texts,
    ),
    SweepCellStarted: st.builds(
        SweepCellStarted,
        cell=cell_names,
        mode=st.sampled_from(["run", "resume"]),
        attempt=positives,
        workers=st.none() | positives,
    ),
    SweepCellEnded: st.builds(
        SweepCellEnded,
        cell=cell_names,
        outcome=st.sampled_from(["finished", "ended", "failed", "interrupted"]),
        exit_code=st.none() | st.integers(-64, 255),
        reason=st.none() | st.sampled_from(typing.get_args(RunEnded.model_fields["reason"].annotation)),
        selected_submission_id=st.none() | submission_ids,
        assessment_score=st.none() | finite,
        budget_used=counts,
        run_head_hash=st.none() | digests,
        run_events=counts,
        message=texts,
    ),
    SweepCellPlaced: st.builds(
        SweepCellPlaced,
        cell=cell_names,
        attempt=positives,
        node_id=st.from_regex(r"[0-9a-f]{1,56}", fullmatch=True),
        hostname=st.text(min_size=1, max_size=20),
        address=st.text(max_size=20),
        pid=positives,
    ),
}
any_event = st.one_of(*STRATEGIES.values())


def stored(pending: PendingEvent, *, seq: int = 1, prev_hash: str = GENESIS_HASH) -> StoredEvent:
    """What the log would hand back for ``pending`` (the test's stand-in for a log row)."""
    return StoredEvent(
        seq=seq,
        kind=pending.kind,
        version=pending.version,
        visibility=pending.visibility,
        payload=pending.payload,
        prev_hash=prev_hash,
        hash=chain_hash(prev_hash, pending.kind, pending.version, pending.visibility, pending.payload),
        recorded_at="2024-01-01T00:00:00Z",
    )


def raw_row(kind: str, payload: bytes, *, version: int = 1, visibility: Visibility = "public") -> StoredEvent:
    return stored(PendingEvent(kind=kind, version=version, visibility=visibility, payload=payload), seq=7)


# ---------------------------------------------------------------------------------------------------------
# Coverage and declarations


def test_strategies_cover_every_kind() -> None:
    assert set(STRATEGIES) == set(EVENT_TYPES.values())
    assert len(EVENT_TYPES) == 28


def test_declared_visibility_of_every_kind() -> None:
    expected = {
        "run-created": "host",
        "run-key": "host",
        "program-snapshotted": "public",
        "submission-accepted": "public",
        "submission-rejected": "public",
        "episode-planned": "host",
        "episode-started": "public",
        "episode-finished": "public",
        "infra-fault": "public",
        "infra-fault-detail": "host",
        "feedback-published": "public",
        "bulk-evicted": "public",
        "finish-accepted": "public",
        "finish-rejected": "public",
        "request-failed": "host",
        "agent-started": "host",
        "agent-exited": "host",
        "agent-transcript": "host",
        "validation-episode-finished": "host",
        "candidate-selected": "host",
        "assessment-finished": "host",
        "run-ended": "host",
        "evaluation-started": "host",
        "evaluation-finished": "host",
        "sweep-created": "host",
        "sweep-cell-started": "host",
        "sweep-cell-placed": "host",
        "sweep-cell-ended": "host",
    }
    assert {kind: visibility_of(kind) for kind in EVENT_TYPES} == expected
    assert {kind: current_version(kind) for kind in EVENT_TYPES if current_version(kind) != 1} == {"infra-fault": 2}


def test_kinds_are_stable_kebab_case_matching_their_class() -> None:
    for kind, cls in EVENT_TYPES.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", kind), kind
        assert cls.model_fields["kind"].default == kind
        assert (cls.__doc__ or "").strip(), f"{cls.__name__} needs a docstring"


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    """All field names of ``model`` and of the models nested in it."""
    seen = set() if seen is None else seen
    if model in seen:
        return set()
    seen.add(model)
    names = set(model.model_fields)
    for field in model.model_fields.values():
        for arg in _flatten(field.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                names |= _field_names(arg, seen)
    return names


def _flatten(annotation: Any) -> list[Any]:
    out = [annotation]
    for arg in typing.get_args(annotation):
        out.extend(_flatten(arg))
    return out


def test_host_seeds_only_live_in_host_events() -> None:
    for kind, cls in EVENT_TYPES.items():
        seedy = {name for name in _field_names(cls) if "seed" in name}
        if visibility_of(kind) == "public":
            assert not seedy, f"public {kind} carries {seedy}"
    assert "env_seed" in EpisodePlanned.model_fields
    assert visibility_of("episode-planned") == "host"


def test_visibility_of_unknown_kind_suggests_the_close_one() -> None:
    with pytest.raises(UnknownNameError, match="episode-finished"):
        visibility_of("episode-finishd")


# ---------------------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("cls", list(STRATEGIES), ids=lambda cls: cls.__name__)
def test_round_trip_through_a_log_row(cls: type[EventBase]) -> None:
    @settings(max_examples=30, deadline=None)
    @given(STRATEGIES[cls])
    def check(event: EventBase) -> None:
        assert type(event) is cls
        _check_round_trip(event)

    check()


def _check_round_trip(event: EventBase) -> None:
    pending = to_pending(event)
    assert pending.kind == event.kind
    assert pending.version == event.version == current_version(event.kind)
    assert pending.visibility == visibility_of(event.kind)
    data = parse_canonical(pending.payload)
    assert "kind" not in data
    assert "version" not in data
    assert canonical_json(data) == pending.payload
    back = from_stored(stored(pending))
    assert type(back) is type(event)
    assert back == event
    assert to_pending(back) == pending
    assert EVENT_ADAPTER.validate_python(event.model_dump()) == event
    assert EVENT_ADAPTER.validate_json(event.model_dump_json()) == event


@EXAMPLES
@given(any_event)
def test_object_refs_follow_the_naming_convention(event: EventBase) -> None:
    dump = event.model_dump(mode="json")
    refs = object_refs(event)
    assert refs == payload_object_refs(parse_canonical(to_pending(event).payload))
    # Every digest-shaped string sits under a reference name, except the declared non-Object hashes.
    expected: set[str] = set()

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k if key != "files" else "files-value")
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif is_digest(value) and key not in ("params_hash", "pool_commitment", "run_head_hash"):
            expected.add(value)

    walk(dump, None)
    assert refs == expected
    # The schema's reading agrees wherever free-form JSON holds no digest-named key (as generated here).
    assert typed_object_refs(to_pending(event).kind, parse_canonical(to_pending(event).payload)) == refs


def test_typed_object_refs_leave_free_form_json_out() -> None:
    a, b, c = (digest_of(bytes([i])) for i in range(3))
    payload = {"trajectory_digest": a, "metrics": {"map_digest": b, "nested": {"x_digests": [c]}}}
    assert payload_object_refs(payload) == {a, b, c}  # the convention, everywhere
    assert typed_object_refs("episode-finished", payload) == {a}
    assert typed_object_refs("episode-finished", {**payload, "failure": {"traceback_digest": c}}) == {a, c}
    started = {"benchmark": {"params": {"weights_digest": b}}, "config": {"w_digest": c}, "program_digest": a}
    assert typed_object_refs("evaluation-started", started) == {a}
    assert typed_object_refs("run-created", {"benchmark_spec": {"a_digest": a}, "config": {}}) == set()
    # Unknown kinds and undeclared keys keep the convention, so nothing is missed.
    assert typed_object_refs("custom-fact", payload) == {a, b, c}
    assert typed_object_refs("episode-finished", {"extra": {"x_digest": b}}) == {b}
    assert typed_object_refs("episode-finished", [{"x_digest": b}]) == {b}


def test_object_refs_examples() -> None:
    a, b, c, d = (digest_of(bytes([i])) for i in range(4))
    event = FeedbackPublished(
        submission_id="submission-000001",
        score=1.0,
        content_digest=a,
        artifacts=(ArtifactRef(name="plot.png", media_type="image/png", digest=b, size=1, retention="bulk"),),
        budget_used=1,
        budget_left=0,
    )
    assert object_refs(event) == {a, b}
    snap = ProgramSnapshotted(
        program_digest=c,
        files={"policy.py": d},
        entry_point="policy.py",
        file_count=1,
        total_bytes=3,
        source="initial",
    )
    assert object_refs(snap) == {c, d}
    assert is_reference_field("digests")
    assert is_reference_field("stdout_digest")
    assert not is_reference_field("params_hash")
    assert not is_reference_field("digestive")
    assert payload_object_refs({"x": [{"traceback_digest": a}], "files": {"p": b}, "other": c}) == {a, b}


# ---------------------------------------------------------------------------------------------------------
# Golden vectors: the encoding must never drift silently.

_D = [digest_of(s.encode()) for s in ("alpha", "beta", "gamma")]
GOLDEN_EVENTS: list[EventBase] = [
    RunCreated(
        run_id="golden-run",
        benchmark=BenchmarkIdentity.of("cartpole", {"max_steps": 500, "gravity": 9.8}),
        episode_budget=16,
        max_submissions=16,
        config={"train_pool_size": 32, "note": "é"},
        pool_commitment=_D[0],
        seed=12345,
        created_by="evoledger 0.1.0",
    ),
    SubmissionAccepted(
        submission_id="submission-000001",
        program_digest=_D[1],
        episodes=(0, 1, 4),
        budget_before=16,
        budget_after=13,
        submissions_used=1,
    ),
    EpisodeFinished(
        submission_id="submission-000001",
        split="train",
        index=4,
        status="timeout",
        episode_return=-0.5,
        steps=200,
        terminated=False,
        truncated=False,
        trajectory_digest=_D[2],
        failure=EpisodeFailure(code="timeout", message="act() took longer than 1.0 s"),
        duration_ms=1003,
    ),
    RunKey(key="2fb592b2d8b0007bec0455b12f34e96273a7feda565ccf32ece004dcf61180f2"),  # sha256 of b"golden key"
]
GOLDEN_PAYLOADS = [
    b'{"benchmark":{"id":"cartpole","params":{"gravity":9.8,"max_steps":500},"params_hash":'
    b'"sha256:15a463afab7a29ff600b1b2caeb2e85193d73d580eaec62a5e24765685c128c8"},"benchmark_spec":{},'
    b'"config":{"note":"\xc3\xa9","train_pool_size":32},"created_by":"evoledger 0.1.0",'
    b'"episode_budget":16,"finish_budget_policy":"allow_early","format_version":1,"max_submissions":16,'
    b'"pool_commitment":"sha256:8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8",'
    b'"run_id":"golden-run","seed":12345}',
    b'{"budget_after":13,"budget_before":16,"episodes":[0,1,4],'
    b'"program_digest":"sha256:f44e64e75f3948e9f73f8dfa94721c4ce8cbb4f265c4790c702b2d41cfbf2753",'
    b'"submission_id":"submission-000001","submissions_used":1}',
    b'{"attempt":1,"duration_ms":1003,"episode_return":-0.5,"evaluation_id":null,'
    b'"failure":{"code":"timeout","message":"act() took longer than 1.0 s","traceback_digest":null},'
    b'"index":4,"metrics":{},"policy_log_digest":null,"split":"train","status":"timeout","steps":200,'
    b'"submission_id":"submission-000001","terminated":false,'
    b'"trajectory_digest":"sha256:be9d587defa1f0c09ef49eb17e206983a5f8f8289e4281860bd0ee5a19592c67",'
    b'"truncated":false}',
    b'{"key":"2fb592b2d8b0007bec0455b12f34e96273a7feda565ccf32ece004dcf61180f2"}',
]
GOLDEN_HASHES = [
    "sha256:21184fed5248ea34e7372d60c1930c46f27821cdb677b59a57db279b7166a42a",
    "sha256:f9e224efa7bb542c873dbc95b8e1e2b5106c134c9de85645b2b0f585ab6d16b0",
    "sha256:36ecd54af7e33a46cc5da15cd241da0bdbd4dff28be6e683e9faf03d7970e4bf",
    "sha256:1d87a7350cffb94947137bd7a76b37c4cfc33401ad81cd4bf8e8c5344fd392de",
]


def test_golden_payloads_and_chain_hashes() -> None:
    prev = GENESIS_HASH
    for event, payload, expected_hash in zip(GOLDEN_EVENTS, GOLDEN_PAYLOADS, GOLDEN_HASHES, strict=True):
        pending = to_pending(event)
        assert pending.payload == payload
        prev = chain_hash(prev, pending.kind, pending.version, pending.visibility, pending.payload)
        assert prev == expected_hash
        assert from_stored(stored(pending)) == event


def test_a_signer_is_in_the_payload_only_when_there_is_one() -> None:
    """An unsigned record's payload is byte for byte what it was before ``signer`` existed (golden above)."""
    key = hashlib.sha256(b"golden signer").hexdigest()
    signer = Signer.of(key)
    assert signer.fingerprint == fingerprint_of(bytes.fromhex(key))  # the schema's copy of the rule agrees
    signed = GOLDEN_EVENTS[0].model_copy(update={"signer": signer})
    payload = to_pending(signed).payload
    assert payload == GOLDEN_PAYLOADS[0][:-1] + (
        b',"signer":{"algorithm":"ed25519","fingerprint":"' + signer.fingerprint.encode() + b'",'
        b'"public_key":"' + key.encode() + b'"}}'
    )
    assert from_stored(stored(to_pending(signed))) == signed
    with pytest.raises(ValidationError, match="fingerprint"):
        Signer(public_key=key, fingerprint="ed25519:" + "0" * 32)


# ---------------------------------------------------------------------------------------------------------
# Strictness at construction


def _finished(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "submission_id": "submission-000002",
        "split": "train",
        "index": 1,
        "status": "ok",
        "episode_return": 10.0,
        "steps": 10,
        "terminated": True,
        "truncated": False,
        "trajectory_digest": _D[0],
        "duration_ms": 5,
    }
    fields.update(overrides)
    return fields


def test_valid_baseline_constructs() -> None:
    assert EpisodeFinished(**_finished()).status == "ok"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"surprise": 1}, "Extra inputs are not permitted"),
        ({"episode_return": math.nan}, "finite"),
        ({"episode_return": math.inf}, "finite"),
        ({"steps": "10"}, "valid integer"),
        ({"terminated": 1}, "valid boolean"),
        ({"steps": -1}, "greater than or equal to 0"),
        ({"kind": "episode-started"}, "episode-finished"),
        ({"version": 2}, "1"),
        ({"trajectory_digest": "sha256:ABC"}, "pattern"),
        ({"submission_id": None}, "exactly one of submission_id and evaluation_id"),
        ({"evaluation_id": "evaluation-000001"}, "exactly one of submission_id and evaluation_id"),
        ({"split": "validation"}, "train split"),
        ({"status": "timeout"}, "needs a failure with the same code"),
        ({"failure": {"code": "exception", "message": "x"}}, "must not carry a failure"),
        ({"status": "timeout", "failure": {"code": "exception", "message": "x"}}, "same code"),
    ],
)
def test_episode_finished_rejects(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EpisodeFinished(**_finished(**overrides))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: RunCreated.model_validate(
                {
                    "run_id": "r",
                    "benchmark": {"id": "x", "params": {}, "params_hash": _D[0]},
                    "episode_budget": 1,
                    "max_submissions": 1,
                    "pool_commitment": _D[0],
                    "seed": 1,
                    "created_by": "t",
                }
            ),
            "params_hash",
        ),
        (lambda: BenchmarkIdentity.of("pkg.module:Benchmark", {}), "pattern"),
        (
            lambda: BenchmarkIdentity(id="x", params={"a": [1.0, {"b": math.nan}]}, params_hash=_D[0]),
            r"non-finite number at \$\.a\[1\]\.b",
        ),
        (lambda: BenchmarkIdentity(id="x", params={"a": -math.inf}, params_hash=_D[0]), "non-finite"),
        (
            lambda: SubmissionAccepted(
                submission_id="submission-000001",
                program_digest=_D[0],
                episodes=(0, 2),
                budget_before=5,
                budget_after=4,
                submissions_used=1,
            ),
            "budget_after",
        ),
        (
            lambda: SubmissionAccepted(
                submission_id="submission-000001",
                program_digest=_D[0],
                episodes=(2, 2),
                budget_before=5,
                budget_after=3,
                submissions_used=1,
            ),
            "strictly increasing",
        ),
        (
            lambda: SubmissionAccepted(
                submission_id="submission-000001",
                program_digest=_D[0],
                episodes=(),
                budget_before=5,
                budget_after=5,
                submissions_used=1,
            ),
            "at least one",
        ),
        (
            lambda: SubmissionAccepted(
                submission_id="sub-1",
                program_digest=_D[0],
                episodes=(0,),
                budget_before=5,
                budget_after=4,
                submissions_used=1,
            ),
            "pattern",
        ),
        (lambda: FinishAccepted(candidates=(), budget_left=0), "at least one Candidate"),
        (lambda: FinishAccepted(candidates=("submission-000001",) * 2, budget_left=0), "distinct"),
        (
            lambda: InfraFault(
                evaluation_id="evaluation-1", split="train", indices=(0,), refunded_units=1, reason="env crashed"
            ),
            "must be 0",
        ),
        (
            lambda: InfraFault(
                submission_id="submission-000001", split="train", indices=(0,), refunded_units=2, reason="env crashed"
            ),
            "exceeds",
        ),
        (
            lambda: InfraFault(
                submission_id="submission-000001", split="train", indices=(), refunded_units=0, reason="x"
            ),
            "at least one pool index",
        ),
        (
            lambda: ProgramSnapshotted(
                program_digest=_D[0],
                files={"a.py": _D[1]},
                entry_point="policy.py",
                file_count=1,
                total_bytes=1,
                source="initial",
            ),
            "not among the files",
        ),
        (
            lambda: ProgramSnapshotted(
                program_digest=_D[0],
                files={"policy.py": _D[1]},
                entry_point="policy.py",
                file_count=2,
                total_bytes=1,
                source="initial",
            ),
            "file_count",
        ),
        (
            lambda: ProgramSnapshotted(
                program_digest=_D[0],
                files={"../policy.py": _D[1]},
                entry_point="../policy.py",
                file_count=1,
                total_bytes=1,
                source="initial",
            ),
            "'..'",
        ),
        (
            lambda: ProgramSnapshotted(
                program_digest=_D[0],
                files={"/policy.py": _D[1]},
                entry_point="/policy.py",
                file_count=1,
                total_bytes=1,
                source="initial",
            ),
            "absolute",
        ),
        (
            lambda: FeedbackPublished(
                submission_id="submission-000001", score=math.nan, content_digest=_D[0], budget_used=1, budget_left=1
            ),
            "finite",
        ),
        (
            lambda: FeedbackPublished.model_validate(
                {
                    "submission_id": "submission-000001",
                    "score": 1.0,
                    "content_digest": _D[0],
                    "budget_used": 1,
                    "budget_left": 1,
                    "artifacts": [
                        {"name": "a", "media_type": "text/plain", "digest": _D[1], "size": 1, "retention": "bulk"}
                    ]
                    * 2,
                }
            ),
            "distinct",
        ),
        (lambda: BulkEvicted(digests=(), submission_ids=(), reason="x", bytes_freed=0), "at least one"),
        (lambda: BulkEvicted(digests=(_D[0], _D[0]), submission_ids=(), reason="x", bytes_freed=0), "distinct"),
        (lambda: AgentStarted(agent="a", command=(), pid=1), "empty"),
        (lambda: AgentExited(pid=1, exit_code=1, signal=9, duration_ms=0, reason="killed"), "not both"),
        (
            lambda: CandidateSelected.model_validate(
                {
                    "submission_id": "submission-000003",
                    "program_digest": _D[0],
                    "tie_break": "",
                    "scores": [
                        {
                            "submission_id": "submission-000001",
                            "program_digest": _D[0],
                            "score": 1.0,
                            "policy_failures": 0,
                            "finish_position": 1,
                        }
                    ],
                }
            ),
            "not among the scored",
        ),
        (
            lambda: AssessmentFinished(
                submission_id="submission-000001", program_digest=_D[0], score=None, episode_count=3, episodes=()
            ),
            "episode_count",
        ),
        (
            lambda: EvaluationFinished.model_validate(
                {
                    "evaluation_id": "evaluation-1",
                    "score": None,
                    "content_digest": _D[0],
                    "episodes": [
                        {"index": 0, "status": "ok", "episode_return": 0.0, "steps": 0, "trajectory_digest": _D[0]}
                    ]
                    * 2,
                }
            ),
            "once",
        ),
        (lambda: RunEnded.model_validate({"reason": "bored"}), "finished"),
    ],
)
def test_invariants_are_enforced_at_construction(build: Callable[[], object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build()


def test_benchmark_identity_of_refuses_non_finite_params() -> None:
    with pytest.raises(EncodingError, match="NaN"):
        BenchmarkIdentity.of("x", {"a": math.nan})


def test_events_are_frozen() -> None:
    event = FinishRejected(code="budget_left", message="spend it first", retryable=True)
    with pytest.raises(ValidationError, match="frozen"):
        event.code = "other"  # type: ignore[misc]


def test_sequences_accept_lists_but_store_tuples() -> None:
    event = FinishAccepted(candidates=["submission-000002", "submission-000001"], budget_left=3)  # type: ignore[arg-type]
    assert event.candidates == ("submission-000002", "submission-000001")


# ---------------------------------------------------------------------------------------------------------
# Decoding stored rows


def _finish_rejected_payload() -> bytes:
    return to_pending(FinishRejected(code="x", message="m", retryable=False)).payload


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            raw_row("finish-rejected", b'{"code":"x","message":"m","retryable":false,"extra":1}'),
            "Extra inputs are not permitted",
        ),
        (
            raw_row(
                "feedback-published",
                b'{"budget_left":0,"budget_used":1,"content_digest":"'
                + _D[0].encode()
                + b'","score":NaN,"submission_id":"submission-000001"}',
            ),
            "finite",
        ),
        (
            raw_row("submission-rejected", b'{"code":"x","message":"m","request":{"a":Infinity},"retryable":true}'),
            "non-finite",
        ),
        (
            raw_row("finish-rejected", b'{"code":"x","kind":"finish-rejected","message":"m","retryable":false}'),
            "repeats",
        ),
        (raw_row("finish-rejected", b'{"code":"x","message":"m","retryable":false,"version":1}'), "repeats"),
        (raw_row("finish-rejected", b'{"code":"x","message":"m"}'), "retryable"),
        (raw_row("finish-rejected", b"[1,2]"), "schema"),
        (raw_row("finish-rejected", b"\xff\xfe"), "schema"),
        (raw_row("finish-rejected", _finish_rejected_payload(), visibility="host"), "visibility"),
        (raw_row("run-created", b"{}", visibility="public"), "visibility"),
        (raw_row("no-such-kind", b"{}"), "unknown kind"),
        (raw_row("finish-rejected", _finish_rejected_payload(), version=2), "version 2"),
        (raw_row("finish-rejected", _finish_rejected_payload(), version=0), "version 0"),
    ],
)
def test_from_stored_raises_schema_error_naming_the_row(row: StoredEvent, message: str) -> None:
    with pytest.raises(SchemaError, match=message) as caught:
        from_stored(row)
    assert "event #7" in str(caught.value)
    assert repr(row.kind) in str(caught.value)


def test_to_pending_refuses_an_unregistered_event_class() -> None:
    class Rogue(EventBase):
        """A kind nobody registered."""

        kind: Literal["finish-rejected"] = "finish-rejected"
        version: Literal[1] = 1
        visibility: ClassVar[Visibility] = "public"

    with pytest.raises(UnknownNameError, match="event kind"):
        to_pending(Rogue())


def test_event_types_checks_declarations() -> None:
    class NoVisibility(EventBase):
        """Forgot its visibility."""

        kind: Literal["x-thing"] = "x-thing"
        version: Literal[1] = 1

    with pytest.raises(SchemaError, match="visibility"):
        event_types([NoVisibility])
    with pytest.raises(SchemaError, match="both"):
        event_types([FinishRejected, FinishRejected])
    assert list(event_types([FinishRejected, FinishAccepted])) == ["finish-accepted", "finish-rejected"]
