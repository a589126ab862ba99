"""Secret-keyed seed derivation: every Host seed of a Run is an HMAC of the Run's secret key.

:func:`derive_seed` is a public function of its seed: whoever learns one input can compute every
output. A Run's Host seeds must instead be unknowable to the Agent and its Policies, so each Run has
a secret key of :data:`RUN_KEY_BYTES` random bytes (recorded host-only) and every Host seed is
``HMAC-SHA256(key, label)`` under its own label, e.g. ``"environment/validation"`` or
``"policy/assessment/3"``. HMAC is a pseudo-random function: seeing any number of outputs under some
labels (a training Episode's ``policy_seed``) reveals neither the key nor the output under any other
label (a held-out Episode's seeds).

A user who wants a reproducible plan gives a seed, and :func:`run_key_from_seed` derives the key from
it -- which makes every Host seed, held-out ones included, computable by anyone who knows that seed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import Final

__all__ = ["RUN_KEY_BYTES", "keyed_seed", "new_run_key", "run_key_from_seed"]

RUN_KEY_BYTES: Final = 32
"""A Run's secret key: 256 bits."""

_SEED_KEY_LABEL: Final = b"evoledger run key from a user-given seed v1"


def new_run_key(random_bytes: Callable[[int], bytes] = secrets.token_bytes) -> bytes:
    """A fresh secret key of :data:`RUN_KEY_BYTES` bytes from ``random_bytes`` (a CSPRNG by default)."""
    key = random_bytes(RUN_KEY_BYTES)
    if not isinstance(key, bytes) or len(key) != RUN_KEY_BYTES:
        size = f"{len(key)} bytes" if isinstance(key, bytes) else type(key).__name__
        raise ValueError(f"random_bytes({RUN_KEY_BYTES}) must return {RUN_KEY_BYTES} bytes, got {size}")
    return key


def run_key_from_seed(seed: int) -> bytes:
    """The key a user-given ``seed`` stands for: reproducible, and therefore predictable by whoever knows ``seed``.

    >>> run_key_from_seed(7) == run_key_from_seed(7) != run_key_from_seed(8)
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return hmac.new(_SEED_KEY_LABEL, str(seed).encode("ascii"), hashlib.sha256).digest()


def keyed_seed(key: bytes, *label: str | int) -> int:
    """A uint64 from ``HMAC-SHA256(key, "/".join(label))``, e.g. ``keyed_seed(key, "policy", "assessment", 3)``.

    Label parts must not contain ``/`` (so two label paths never join to the same text).

    >>> key = bytes(32)
    >>> keyed_seed(key, "policy", "train", 1) != keyed_seed(key, "policy", "validation", 1)
    True
    """
    if not isinstance(key, bytes) or len(key) != RUN_KEY_BYTES:
        size = f"{len(key)} bytes" if isinstance(key, bytes) else type(key).__name__
        raise ValueError(f"a Run key is {RUN_KEY_BYTES} bytes, got {size}")
    parts = [str(p) for p in label]
    if not parts or any("/" in p or not p for p in parts):
        raise ValueError(f"label parts must be non-empty and contain no '/', got {label!r}")
    digest = hmac.new(key, "/".join(parts).encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")
