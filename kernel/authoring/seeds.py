"""Deterministic, public seed derivation with separate hash domains.

:func:`derive_seed` hashes a seed and a domain path, so different domains (splits, Episodes) never share a
seed by construction and the same inputs give the same seeds on any machine. It is public: whoever knows
the input seed can compute every output. Benchmarks use it to derive per-Episode seeds from the split seed
the Host hands them, and ``evoledger evaluate`` to plan from its user-given seed. A Run's Host seeds are
instead HMACs of a secret key (:mod:`evoledger.kernel.authoring.keyed_seeds`), so the split seeds a
Benchmark is handed are themselves unknowable.
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
