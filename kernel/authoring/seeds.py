"""Deterministic seed derivation with separate hash domains.

Host-owned seeds (Environment seeds per split, Policy seeds) are derived from one Run or evaluation
seed by hashing a domain path, so the train, validation and test splits can never share a seed by
construction, and the same inputs always give the same seeds on any machine.
"""

from __future__ import annotations

import hashlib

__all__ = ["UINT64_MAX", "derive_seed"]

UINT64_MAX = 2**64 - 1


def derive_seed(seed: int, *domain: str | int) -> int:
    """A uint64 derived from ``seed`` and a domain path, e.g. ``derive_seed(7, "environment", "train", 3)``.

    >>> derive_seed(0, "policy", "train", 1) == derive_seed(0, "policy", "train", 1)
    True
    >>> derive_seed(0, "policy", "train", 1) != derive_seed(0, "policy", "validation", 1)
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    parts = [str(seed), *(f"{type(p).__name__}:{p}" for p in domain)]
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")
