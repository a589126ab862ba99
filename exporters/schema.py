"""The Arrow schema of each dataset config, and its HuggingFace ``features`` in dataset-card YAML form.

The schemas are fixed per export: only the ``observation``/``action`` column types depend on the
Benchmark's spaces (see ``exporters.spaces``). Tool-call arguments and free-form documents are JSON
text, so a schema never varies from row to row.
"""

from __future__ import annotations

from typing import Any, Final

import pyarrow as pa
from evoledger.exporters.options import ConfigName
from evoledger.exporters.spaces import IMAGE_TYPE, ValueEncoding
from evoledger.ledger.errors import SchemaError

__all__ = [
    "episodes_schema",
    "features_yaml",
    "messages_schema",
    "schema_for",
    "steps_schema",
    "submissions_schema",
]

_STR: Final = pa.string()
_I32: Final = pa.int32()
_I64: Final = pa.int64()
_F64: Final = pa.float64()
_BOOL: Final = pa.bool_()


def _schema(*fields: tuple[str, pa.DataType, bool]) -> pa.Schema:
    return pa.schema([pa.field(name, kind, nullable=nullable) for name, kind, nullable in fields])


def steps_schema(observation: ValueEncoding, action: ValueEncoding) -> pa.Schema:
    """One row per Environment step (``submission_id`` is null for the Episodes of an Evaluation record)."""
    return _schema(
        ("run_id", _STR, False),
        ("episode_id", _STR, False),
        ("submission_id", _STR, True),
        ("split", _STR, False),
        ("episode_index", _I32, False),
        ("step", _I32, False),
        ("observation", observation.arrow_type, False),
        ("action", action.arrow_type, False),
        ("reward", _F64, False),
        ("next_observation", observation.arrow_type, True),
        ("terminated", _BOOL, False),
        ("truncated", _BOOL, False),
        ("policy_failure", _STR, True),
    )


def episodes_schema() -> pa.Schema:
    """One row per Episode (``submission_id`` is null for the Episodes of an Evaluation record)."""
    return _schema(
        ("run_id", _STR, False),
        ("episode_id", _STR, False),
        ("benchmark", _STR, False),
        ("submission_id", _STR, True),
        ("split", _STR, False),
        ("episode_index", _I32, False),
        ("attempt", _I32, False),
        ("program_digest", _STR, False),
        ("status", _STR, False),
        ("policy_failure", _STR, True),
        ("failure_message", _STR, True),
        ("episode_return", _F64, False),
        ("steps", _I64, False),
        ("terminated", _BOOL, False),
        ("truncated", _BOOL, False),
        ("trajectory_digest", _STR, False),
    )


_PROGRAM_FILE: Final = pa.struct(
    [pa.field("path", _STR), pa.field("digest", _STR), pa.field("size", _I64), pa.field("text", _STR)]
)
_ARTIFACT: Final = pa.struct(
    [
        pa.field("name", _STR),
        pa.field("media_type", _STR),
        pa.field("digest", _STR),
        pa.field("size", _I64),
        pa.field("retention", _STR),
    ]
)


def submissions_schema() -> pa.Schema:
    """One row per accepted Submission, with its outcome labels."""
    return _schema(
        ("run_id", _STR, False),
        ("benchmark", _STR, False),
        ("submission_id", _STR, False),
        ("position", _I32, False),
        ("program_digest", _STR, False),
        ("program_files", pa.list_(_PROGRAM_FILE), False),
        ("program_diff", _STR, False),
        ("episodes", pa.list_(_I32), False),
        ("episode_selector", _STR, False),
        ("budget_before", _I64, False),
        ("budget_after", _I64, False),
        ("budget_used", _I64, True),
        ("budget_left", _I64, True),
        ("score", _F64, True),
        ("feedback_content", _STR, True),
        ("feedback_artifacts", pa.list_(_ARTIFACT), False),
        ("episodes_finished", _I32, False),
        ("policy_failures", _I32, False),
        ("candidate", _BOOL, False),
        ("finish_position", _I32, True),
        ("validation_score", _F64, True),
        ("selected", _BOOL, False),
        ("assessment_score", _F64, True),
        ("run_assessment_score", _F64, True),
        ("run_end_reason", _STR, True),
    )


_TOOL_CALL: Final = pa.struct(
    [
        pa.field("id", _STR),
        pa.field("type", _STR),
        pa.field("function", pa.struct([pa.field("name", _STR), pa.field("arguments", _STR)])),
    ]
)
MESSAGE_TYPE: Final = pa.struct(
    [
        pa.field("role", _STR),
        pa.field("content", _STR),
        pa.field("name", _STR),
        pa.field("tool_call_id", _STR),
        pa.field("tool_calls", pa.list_(_TOOL_CALL)),
        pa.field("reasoning_content", _STR),
    ]
)


def messages_schema() -> pa.Schema:
    """One row per Run: the Agent's conversation in chat format and its final reward.

    ``transcript_format`` names the coding-agent CLI transcript the conversation comes from (``None``: rebuilt from the
    Session's requests); ``input_tokens`` / ``output_tokens`` / ``cost_usd`` are what that CLI reported, summed over
    the Agent's attempts (``None`` when it reported none).
    """
    return _schema(
        ("run_id", _STR, False),
        ("benchmark", _STR, False),
        ("messages", pa.list_(MESSAGE_TYPE), False),
        ("reward", _F64, True),
        ("reward_source", _STR, False),
        ("selected_submission_id", _STR, True),
        ("submissions", _I32, False),
        ("run_end_reason", _STR, True),
        ("transcript_format", _STR, True),
        ("input_tokens", _I64, True),
        ("output_tokens", _I64, True),
        ("cost_usd", _F64, True),
    )


def schema_for(config: ConfigName, observation: ValueEncoding, action: ValueEncoding) -> pa.Schema:
    """The schema of ``config``."""
    if config == "steps":
        return steps_schema(observation, action)
    if config == "episodes":
        return episodes_schema()
    if config == "submissions":
        return submissions_schema()
    return messages_schema()


_DTYPES: Final = {
    pa.string(): "string",
    pa.bool_(): "bool",
    pa.int32(): "int32",
    pa.int64(): "int64",
    pa.float32(): "float32",
    pa.float64(): "float64",
}


def _dtype(kind: pa.DataType) -> str:
    try:
        return _DTYPES[kind]
    except KeyError:
        raise SchemaError(f"no dataset-card dtype for Arrow type {kind}") from None


def _fields(kind: pa.StructType) -> list[dict[str, Any]]:
    return [{"name": kind.field(i).name, **_feature(kind.field(i).type)} for i in range(kind.num_fields)]


def _list(kind: pa.DataType) -> dict[str, Any]:
    """A list feature; a fixed-size list carries its ``length`` (``datasets`` ``List(..., length=N)``)."""
    if pa.types.is_fixed_size_list(kind):
        return {"list": _list_item(kind.value_type), "length": kind.list_size}
    return {"list": _list_item(kind.value_type)}


def _is_list(kind: pa.DataType) -> bool:
    return bool(pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind))


def _list_item(kind: pa.DataType) -> Any:
    if pa.types.is_struct(kind):
        return _fields(kind)
    if _is_list(kind):
        return _list(kind)
    return _dtype(kind)


def _feature(kind: pa.DataType) -> dict[str, Any]:
    if kind == IMAGE_TYPE:  # a PNG image (exporters.spaces): datasets' Image feature
        return {"dtype": "image"}
    if pa.types.is_struct(kind):
        return {"struct": _fields(kind)}
    if _is_list(kind):
        return _list(kind)
    return {"dtype": _dtype(kind)}


def features_yaml(schema: pa.Schema) -> list[dict[str, Any]]:
    """The ``features`` list of a dataset card for ``schema`` (the ``datasets`` >= 4 YAML form)."""
    return [{"name": f.name, **_feature(f.type)} for f in schema]
