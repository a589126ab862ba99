"""Run facts: how a Run was created (with its Benchmark identity and pool commitment) and how it ended."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events.base import (
    ContentHash,
    Count,
    EventBase,
    EventPart,
    JsonObject,
    Message,
    Name,
    Positive,
    RunId,
    SubmissionId,
)
from evoledger.ledger.records import Visibility
from pydantic import SerializerFunctionWrapHandler, StringConstraints, model_serializer, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "LEDGER_FORMAT_VERSION",
    "BenchmarkIdentity",
    "FinishBudgetPolicy",
    "RunCreated",
    "RunEndReason",
    "RunEnded",
    "RunKey",
    "RunKeyHex",
    "Signer",
]

LEDGER_FORMAT_VERSION: Final = 1
"""The evoledger record format written by this version of the library."""

FinishBudgetPolicy = Literal["allow_early", "require_budget_exhaustion"]
"""Whether ``finish`` is accepted while Episode budget remains."""

RunEndReason = Literal[
    "finished",
    "agent_exited",
    "budget_exhausted",
    "agent_failed",
    "agent_timeout",
    "validation_failed",
    "assessment_failed",
]
"""Why a Run ended."""

RunKeyHex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A Run's 256-bit secret key as 64 lowercase hex digits."""


class BenchmarkIdentity(EventPart):
    """Which Benchmark, with which parameters: ``params_hash`` is the digest of the canonical ``params``.

    Build it with :meth:`of`; the hash is checked on validation so it can be compared across records.
    """

    id: Name
    params: JsonObject = {}
    params_hash: ContentHash

    @classmethod
    def of(cls, benchmark_id: str, params: JsonObject) -> BenchmarkIdentity:
        """The identity of Benchmark ``benchmark_id`` with ``params`` (hash computed here)."""
        return cls(id=benchmark_id, params=params, params_hash=digest_of(canonical_json(params)))

    @model_validator(mode="after")
    def _check_hash(self) -> Self:
        expected = digest_of(canonical_json(self.params))
        if self.params_hash != expected:
            raise PydanticCustomError(
                "params_hash",
                "params_hash {got} does not match the params (expected {expected}); "
                "build the identity with BenchmarkIdentity.of()",
                {"got": self.params_hash, "expected": expected},
            )
        return self


class Signer(EventPart):
    """The ed25519 public key that signs a record's head manifest (``ledger.sig``, see ``ledger.signing``).

    ``fingerprint`` is ``ed25519:`` + the first 16 bytes of sha256(public key), checked on validation.
    """

    algorithm: Literal["ed25519"] = "ed25519"
    public_key: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    """The raw 32-byte public key in lowercase hex."""
    fingerprint: Annotated[str, StringConstraints(pattern=r"^ed25519:[0-9a-f]{32}$")]

    @classmethod
    def of(cls, public_key_hex: str) -> Signer:
        """The Signer of ``public_key_hex`` (fingerprint computed here)."""
        return cls(public_key=public_key_hex, fingerprint=_fingerprint(public_key_hex))

    @model_validator(mode="after")
    def _check_fingerprint(self) -> Self:
        expected = _fingerprint(self.public_key)
        if self.fingerprint != expected:
            raise PydanticCustomError(
                "fingerprint",
                "fingerprint {got} does not match the public key (expected {expected}); build it with Signer.of()",
                {"got": self.fingerprint, "expected": expected},
            )
        return self


def _fingerprint(public_key_hex: str) -> str:
    # the same rule as ledger.signing_keys.fingerprint_of, without importing the crypto library here
    return "ed25519:" + hashlib.sha256(bytes.fromhex(public_key_hex)).digest()[:16].hex()


def omit_unsigned(data: Any, signer: Signer | None) -> Any:
    """Drop ``signer`` from a serialized record Event when it is ``None``: unsigned payloads stay as before."""
    if signer is None and isinstance(data, dict):
        data.pop("signer", None)
    return data


class RunCreated(EventBase):
    """Records a new Run: its Benchmark, budget settings, configuration, pool commitment and user-given seed."""

    kind: Literal["run-created"] = "run-created"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    run_id: RunId
    format_version: Positive = LEDGER_FORMAT_VERSION
    benchmark: BenchmarkIdentity
    episode_budget: Positive
    max_submissions: Positive
    finish_budget_policy: FinishBudgetPolicy = "allow_early"
    config: JsonObject = {}
    """The remaining Run settings as configured (pool sizes, time limits, retention, ...)."""
    benchmark_spec: JsonObject = {}
    """The Benchmark's public spec as the Agent sees it (spaces, metadata, score direction); no Host data."""
    pool_commitment: ContentHash
    """The sha256 of the Host's planned Episode pools, fixed before the Agent starts."""
    seed: Count | None = None
    """The user-given seed the Run's key was derived from (a reproducible, predictable plan); ``None``: a random key."""
    created_by: Message
    """The tool and version that created the Run, e.g. ``evoledger 0.1.0``."""
    signer: Signer | None = None
    """The key that signs the Run's head manifest; ``None`` (and absent from the payload): an unsigned Run."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return omit_unsigned(handler(self), self.signer)


class RunKey(EventBase):
    """Records a Run's secret key: every Host seed and scenario is an HMAC of it under its own label.

    Host-only, and kept apart from ``run-created`` (whose configuration reports and tools show): the key
    decides every held-out Episode, so whoever reads it can predict them. It is random unless ``run-created``
    records a user-given ``seed``, from which it is then derived.
    """

    kind: Literal["run-key"] = "run-key"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    key: RunKeyHex


class RunEnded(EventBase):
    """Records that a Run reached a terminal state, why, and a short summary."""

    kind: Literal["run-ended"] = "run-ended"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    reason: RunEndReason
    selected_submission_id: SubmissionId | None = None
    message: Message = ""
    summary: JsonObject = {}
