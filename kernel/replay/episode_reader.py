"""Reading an ``episode-finished`` payload dict without pydantic validation, when it is certainly valid.

About half of a Run's Events are ``episode-finished``; validating each with pydantic costs more than
everything else replay does with it (``bench/replay_bench.py``: the one pass over the log takes about
half as long again without this reader). :func:`read_finished_episode` takes the payload as the
protocol audit parsed it and returns the ``EpisodeFinished`` Event built from it without validation --
the cheaper input the projections' own handlers then fold like any other Event -- but only when the dict
is, beyond doubt, one that ``EpisodeFinished`` validates *to the same values*: every field present
(none repeated from the row), exact JSON types (no int where a float is stored, no bool for an int),
the same patterns, ranges and cross-field rules as the model. Anything else -- a missing or extra
key, a non-ASCII message, nested metrics, a float too large to be sure it was not an integer that
orjson widened (|x| >= 2**63) -- returns ``None`` and the caller validates the Event with pydantic as
before, so schema findings and folded values are unchanged. A property-based test compares the Event
built here with the validated one on mutated payloads; keep the two in step when the ``EpisodeFinished``
schema changes (that test fails when they drift).
"""

from __future__ import annotations

import re
from typing import Any, Final

from evoledger.ledger.events import EpisodeFailure, EpisodeFinished
from pydantic import BaseModel

__all__ = ["EpisodeReader", "FinishedEpisode", "read_finished_episode"]

_KEYS: Final = frozenset(
    {
        "attempt",
        "duration_ms",
        "episode_return",
        "evaluation_id",
        "failure",
        "index",
        "metrics",
        "policy_log_digest",
        "split",
        "status",
        "steps",
        "submission_id",
        "terminated",
        "trajectory_digest",
        "truncated",
    }
)
_FAILURE_KEYS: Final = frozenset({"code", "message", "traceback_digest"})
_SPLITS: Final = frozenset({"train", "validation", "assessment"})
_FAILURE_CODES: Final = frozenset({"exception", "timeout", "invalid_action", "protocol_error", "memory"})
_STATUSES: Final = _FAILURE_CODES | {"ok"}
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}").fullmatch
_SUBMISSION: Final = re.compile(r"submission-[0-9]{6,}").fullmatch
_EVALUATION: Final = re.compile(r"evaluation-[A-Za-z0-9][A-Za-z0-9._-]{0,63}").fullmatch
_MESSAGE_MAX: Final = 65536
_WIDE: Final = float(2**63)
_IDENTITY: Final = {name: EpisodeFinished.model_fields[name].default for name in ("kind", "version")}
_FIELDS_SET: Final = frozenset(_KEYS)
_FAILURE_FIELDS_SET: Final = frozenset(_FAILURE_KEYS)
_SHARED_FIELDS_SET: Final = set(_KEYS)
"""The fields set of every Event built here, one set for all: allocating one per Episode costs more than the rest of
the build. Safe because the Events are transient (the projections keep views, never them) and frozen, and pydantic
copies a model's fields set before it changes one (``model_copy``)."""
_new: Final = object.__new__
_set: Final = object.__setattr__


FinishedEpisode = tuple[EpisodeFinished, tuple[str, ...]]
"""``(event, digests)``: the Event a valid payload records, and the Object digests of its trajectory,
policy log and traceback fields (a plain tuple: it is made per Episode)."""


def _built(cls: type[BaseModel], fields: dict[str, Any], fields_set: frozenset[str]) -> Any:
    """The ``cls`` instance of already-valid ``fields``, built the way pydantic's ``model_construct`` builds one
    (without validation), minus its per-field default handling: every field is present."""
    model = _new(cls)
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", set(fields_set))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _flat_json(metrics: dict[Any, Any]) -> bool:
    for key, value in metrics.items():
        kind = type(value)
        if not key.isascii():
            return False
        if kind is float:
            if not -_WIDE < value < _WIDE:  # also refuses NaN and infinities
                return False
        elif kind is str:
            if not value.isascii():
                return False
        elif value is not None and kind is not bool and kind is not int:
            return False
    return True


class EpisodeReader:
    """:meth:`read` payload dicts of ``episode-finished`` Events (one reader per pass: it remembers valid ids)."""

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def read(self, data: dict[str, Any]) -> FinishedEpisode | None:
        """The Event a valid ``episode-finished`` payload records, or ``None`` when pydantic must decide."""
        if data.keys() != _KEYS:
            return None
        sid, evaluation, split, status = data["submission_id"], data["evaluation_id"], data["split"], data["status"]
        if sid is not None:
            if evaluation is not None or split != "train" or type(sid) is not str:
                return None
            if sid not in self._ids:
                if not _SUBMISSION(sid):
                    return None
                self._ids.add(sid)
        elif not (type(evaluation) is str and _EVALUATION(evaluation) and type(split) is str and split in _SPLITS):
            return None
        ret, steps, index, duration = data["episode_return"], data["steps"], data["index"], data["duration_ms"]
        attempt, terminated, truncated = data["attempt"], data["terminated"], data["truncated"]
        if (
            type(ret) is not float
            or not -_WIDE < ret < _WIDE
            or type(steps) is not int
            or steps < 0
            or type(index) is not int
            or index < 0
            or type(attempt) is not int
            or attempt < 1
            or type(terminated) is not bool
            or type(truncated) is not bool
            or (duration is not None and (type(duration) is not int or duration < 0))
            or type(status) is not str
            or status not in _STATUSES
        ):
            return None
        trajectory, log, metrics, failure = (
            data["trajectory_digest"],
            data["policy_log_digest"],
            data["metrics"],
            data["failure"],
        )
        if type(trajectory) is not str or not _DIGEST(trajectory):
            return None
        if type(metrics) is not dict or (metrics and not _flat_json(metrics)):
            return None
        if failure is None:
            if status != "ok":
                return None
            message = traceback = None
        else:
            if type(failure) is not dict or failure.keys() != _FAILURE_KEYS:
                return None
            code, message, traceback = failure["code"], failure["message"], failure["traceback_digest"]
            if (
                status == "ok"
                or code != status
                or type(message) is not str
                or not message.isascii()
                or len(message) > _MESSAGE_MAX
                or (traceback is not None and (type(traceback) is not str or not _DIGEST(traceback)))
            ):
                return None
        if log is None:
            digests: tuple[str, ...] = (trajectory,) if traceback is None else (trajectory, traceback)
        elif type(log) is not str or not _DIGEST(log):
            return None
        else:
            digests = (trajectory, log) if traceback is None else (trajectory, log, traceback)
        fields = {**data, **_IDENTITY}
        if failure is not None:
            fields["failure"] = _built(EpisodeFailure, dict(failure), _FAILURE_FIELDS_SET)
        event = _new(EpisodeFinished)  # what _built does, inline: this runs once per Episode
        _set(event, "__dict__", fields)
        _set(event, "__pydantic_fields_set__", _SHARED_FIELDS_SET)
        _set(event, "__pydantic_extra__", None)
        _set(event, "__pydantic_private__", None)
        return event, digests


def read_finished_episode(data: dict[str, Any]) -> FinishedEpisode | None:
    """:meth:`EpisodeReader.read` with a fresh reader."""
    return EpisodeReader().read(data)
