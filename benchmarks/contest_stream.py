"""The version-stable random stream every programming-contest Benchmark draws its cases from.

A contest case (an AtCoder or CodeChef instance) must be the same on every machine, Python and numpy
version, so it never comes from ``random`` or numpy generators. The stream is plain SHA-256 in counter
mode: the ``k``-th draw (counter ``k`` from 0) is the first 8 bytes, read big-endian, of
``SHA-256(domain || case_seed as 8-byte big-endian || k as 8-byte big-endian)``, where ``domain`` names the
generator (e.g. ``b"evopolicygym-molecules/generator/v1\\0"``) and ``case_seed`` is the Episode's seed.

* ``below(n)``: an unbiased integer in ``[0, n)``: draws are rejected while they are at least
  ``2**64 - (2**64 mod n)``, then reduced ``mod n``.
* ``shuffle(items)``: Fisher-Yates in place, from the last index down to 1, the partner of index ``i`` being
  ``below(i + 1)``.
* ``unit()``: one draw divided by ``2**64``, in ``[0, 1)``.
* ``nearest(x)``: the contests' "nearest integer", ``floor(x + 0.5)`` (halves round up, unlike ``round``).
"""

from __future__ import annotations

import hashlib
import math
from typing import Final, TypeVar

__all__ = ["CaseStream", "nearest"]

_T = TypeVar("_T")
_TWO_64: Final = 1 << 64
_MAX_SEED: Final = _TWO_64 - 1


class CaseStream:
    """Deterministic draws for one contest case: ``CaseStream(domain, case_seed)``."""

    __slots__ = ("_counter", "_prefix")

    def __init__(self, domain: bytes, case_seed: int) -> None:
        if not isinstance(domain, bytes):
            raise TypeError(f"the generator domain must be bytes, got {type(domain).__name__}")
        if not 0 <= case_seed <= _MAX_SEED:
            raise ValueError(f"a case seed is an unsigned 64-bit integer, got {case_seed}")
        self._prefix = domain + case_seed.to_bytes(8, "big")
        self._counter = 0

    def next_u64(self) -> int:
        """The next raw draw, an integer in ``[0, 2**64)``."""
        digest = hashlib.sha256(self._prefix + self._counter.to_bytes(8, "big")).digest()
        self._counter += 1
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int) -> int:
        """An unbiased integer in ``[0, n)`` by rejection sampling."""
        if not 1 <= n <= _TWO_64:
            raise ValueError(f"below(n) needs 1 <= n <= 2**64, got {n}")
        limit = _TWO_64 - (_TWO_64 % n)
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n

    def shuffle(self, items: list[_T]) -> None:
        """Fisher-Yates in place, from the last index down, partner ``below(i + 1)``."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def unit(self) -> float:
        """A float in ``[0, 1)``: one draw divided by ``2**64``."""
        return self.next_u64() / _TWO_64


def nearest(x: float) -> int:
    """The contests' nearest integer, ``floor(x + 0.5)``."""
    return math.floor(x + 0.5)
