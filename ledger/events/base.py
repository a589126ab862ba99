"""The base of every Event model and the field types Events share.

An Event is data: a frozen pydantic model that forbids unknown fields and validates strictly (no
``"1"`` -> ``1`` coercion, no ``1`` -> ``True``); only sequences are lax so that code may pass a
``list`` where the model stores a ``tuple``. Every concrete Event declares

* ``kind: Literal["..."]`` -- a stable kebab-case name (never a Python import path),
* ``version: Literal[n]`` -- the current schema version of that kind, and
* ``visibility: ClassVar[Visibility]`` -- ``"public"`` (may reach the Agent) or ``"host"`` (never does).

Both ``kind`` and ``version`` default to their only allowed value, so constructing an Event never
names them. Floats are finite everywhere, including inside free-form JSON objects.

**Object reference convention.** Any Object digest in a payload sits under a field named
``digest``, ``digests``, ``*_digest`` or ``*_digests``, or is a value of a ``files`` mapping
(Program path -> digest). Conversely such fields hold nothing but Object digests. Hashes that are
*not* Objects (a pool commitment, a parameters hash) use other names (``*_hash``, ``*_commitment``).
``ledger.events.references`` and the integrity check rely on this.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, TypeAlias, TypeVar

from evoledger.ledger.records import Visibility
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    Strict,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "Code",
    "ContentHash",
    "Count",
    "EpisodeStatus",
    "EvaluationId",
    "EventBase",
    "EventPart",
    "FailureCode",
    "FiniteFloat",
    "FrozenList",
    "JsonObject",
    "MediaType",
    "Message",
    "Name",
    "ObjectDigest",
    "PoolIndex",
    "Positive",
    "ProgramPath",
    "RunId",
    "Split",
    "SubmissionId",
    "check_program_path",
]

_T = TypeVar("_T")

ObjectDigest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
"""The content address of an Object (``sha256:`` + 64 lowercase hex digits)."""

ContentHash = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
"""A sha256 that is *not* an Object reference (a commitment or a parameters hash)."""

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that is neither NaN nor infinite (ints are accepted and stored as floats)."""

Count = Annotated[int, Field(ge=0)]
"""A non-negative integer."""

Positive = Annotated[int, Field(ge=1)]
"""A positive integer."""

PoolIndex = Annotated[int, Field(ge=0)]
"""A position in an Episode pool; the only handle on an Episode the Agent ever sees."""

FrozenList: TypeAlias = Annotated[tuple[_T, ...], Strict(False)]
"""An immutable sequence that also accepts a ``list`` on construction (its items stay strict)."""

SubmissionId = Annotated[str, StringConstraints(pattern=r"^submission-[0-9]{6,}$")]
"""A Submission's id, e.g. ``submission-000001``."""

EvaluationId = Annotated[str, StringConstraints(pattern=r"^evaluation-[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
"""A standalone Evaluation's id, e.g. ``evaluation-000001``."""

RunId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
"""A Run's id (usually the Run directory's name)."""

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,127}$")]
"""A registry name (Benchmark, Agent, tool). Colons are refused so that no import path slips in."""

Code = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
"""A machine-readable snake_case code (rejection codes, exit reasons)."""

Message = Annotated[str, StringConstraints(max_length=65536)]
"""Human-readable text, bounded so that one Event stays small."""

MediaType = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")]
"""A media type without parameters, e.g. ``application/json``."""

Split = Literal["train", "validation", "assessment"]
"""Which part of the Host's Episode pool: train (Agent-visible), validation, assessment (private)."""

FailureCode = Literal["exception", "timeout", "invalid_action", "protocol_error", "memory"]
"""Why a Policy failed an Episode (a Policy failure is never an infra fault)."""

EpisodeStatus = Literal["ok", "exception", "timeout", "invalid_action", "protocol_error", "memory"]
"""``ok`` or the :data:`FailureCode` that ended the Episode."""


def check_program_path(path: str) -> str | None:
    """Why ``path`` is not a valid Program file path, or ``None`` when it is.

    A valid path is relative, POSIX-separated, non-empty, free of ``.``/``..``/empty components,
    backslashes, NUL and lone surrogates (names that were not UTF-8 on disk).
    """
    if not path:
        return "the path is empty"
    if path.startswith("/"):
        return "the path is absolute; use a path relative to the Program directory"
    if "\\" in path or "\x00" in path:
        return "the path contains a backslash or NUL; use '/' separators and plain names"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8; rename it"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return "the path has an empty, '.' or '..' component; use a normalised relative path"
    return None


def _program_path(value: str) -> str:
    problem = check_program_path(value)
    if problem is not None:
        raise PydanticCustomError(
            "program_path", "invalid Program path {path!r}: {problem}", {"path": value, "problem": problem}
        )
    return value


ProgramPath = Annotated[str, AfterValidator(_program_path)]
"""A file's path inside a Program: relative, POSIX, normalised (see :func:`check_program_path`)."""


def _non_finite_path(value: Any, where: str) -> str | None:
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite_path(item, f"{where}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _non_finite_path(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _finite_json(value: dict[str, JsonValue]) -> dict[str, JsonValue]:
    where = _non_finite_path(value, "$")
    if where is not None:
        raise PydanticCustomError(
            "finite_json", "non-finite number at {where}; use a finite number or null", {"where": where}
        )
    return value


JsonObject = Annotated[dict[str, JsonValue], AfterValidator(_finite_json)]
"""A free-form JSON object (configs, summaries) whose numbers are all finite."""


class EventPart(BaseModel):
    """The base of a value nested inside an Event (same rules: frozen, strict, unknown fields refused)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, validate_default=True, defer_build=True)


class EventBase(BaseModel):
    """The base of every Event: frozen, strict, unknown fields refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, validate_default=True, defer_build=True)

    kind: str
    """The stable kebab-case name of this kind of fact (a ``Literal`` in every concrete Event)."""
    version: int
    """The schema version of this kind (a ``Literal`` with the current version in every concrete Event)."""
    visibility: ClassVar[Visibility]
    """``public`` facts may reach the Agent; ``host`` facts never do."""
