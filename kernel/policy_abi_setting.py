"""The ``policy_abi`` setting that ``RunConfig`` and ``EvaluationConfig`` share: one description, and recorded only
when it is not the default, so records made before ``--policy-abi`` existed keep their bytes."""

from __future__ import annotations

from typing import Any

from evoledger.kernel.execution.abi import DEFAULT_POLICY_ABI
from pydantic import Field

__all__ = ["policy_abi_field", "without_default_policy_abi"]


def policy_abi_field() -> Any:
    """The ``policy_abi`` field of a config model (its description becomes the ``--policy-abi`` help)."""
    return Field(
        default=DEFAULT_POLICY_ABI,
        description="The contract Policy Programs are written to: evoledger (make_policy with gymnasium spaces, "
        "observations as the Environment makes them) or evopolicygym (EvoPolicyGym 0.3 Programs unchanged: "
        "evopolicygym.policy, its observation and action encodings; only for the Benchmarks that have them). "
        "Recorded only when not the default.",
    )


def without_default_policy_abi(data: Any) -> Any:
    """A config model's serialized ``data`` without ``policy_abi`` when it is the default."""
    if isinstance(data, dict) and data.get("policy_abi") == DEFAULT_POLICY_ABI:
        del data["policy_abi"]
    return data
