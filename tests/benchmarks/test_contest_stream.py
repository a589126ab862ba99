"""The contest case stream against values computed here independently with hashlib."""

from __future__ import annotations

import hashlib

import pytest
from evoledger.benchmarks.contest_stream import CaseStream, nearest

DOMAIN = b"evopolicygym-test/generator/v1\0"


def _draw(domain: bytes, seed: int, counter: int) -> int:
    message = domain + seed.to_bytes(8, "big") + counter.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def test_next_u64_is_sha256_of_domain_seed_and_counter_big_endian() -> None:
    stream = CaseStream(DOMAIN, 0x0102030405060708)
    expected = [_draw(DOMAIN, 0x0102030405060708, k) for k in range(5)]
    assert [stream.next_u64() for _ in range(5)] == expected
    # Pin the byte layout: changing endianness or the seed width would change this literal.
    message = DOMAIN + bytes([1, 2, 3, 4, 5, 6, 7, 8]) + bytes(8)
    assert expected[0] == int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def test_streams_differ_by_domain_and_seed() -> None:
    assert CaseStream(DOMAIN, 1).next_u64() != CaseStream(DOMAIN, 2).next_u64()
    assert CaseStream(DOMAIN, 1).next_u64() != CaseStream(b"other\0", 1).next_u64()


def test_below_rejects_draws_at_or_above_the_limit_then_reduces() -> None:
    n = 3
    limit = 2**64 - (2**64 % n)
    # Find a seed whose first draw is rejected for a huge n, to exercise the rejection path.
    big = 2**63 + 1  # limit = 2**63 + 1, so about half of all draws are rejected
    big_limit = 2**64 - (2**64 % big)
    seed = next(s for s in range(100) if _draw(DOMAIN, s, 0) >= big_limit)
    stream = CaseStream(DOMAIN, seed)
    k = 0
    while _draw(DOMAIN, seed, k) >= big_limit:
        k += 1
    assert stream.below(big) == _draw(DOMAIN, seed, k) % big
    assert stream.next_u64() == _draw(DOMAIN, seed, k + 1)

    stream = CaseStream(DOMAIN, 7)
    values = [stream.below(n) for _ in range(50)]
    expected: list[int] = []
    k = 0
    while len(expected) < 50:
        raw = _draw(DOMAIN, 7, k)
        k += 1
        if raw < limit:
            expected.append(raw % n)
    assert values == expected
    assert set(values) == {0, 1, 2}
    assert CaseStream(DOMAIN, 7).below(1) == 0


def test_shuffle_is_fisher_yates_from_the_last_index_down() -> None:
    items = list(range(10))
    CaseStream(DOMAIN, 11).shuffle(items)

    expected = list(range(10))
    k = 0
    for i in range(9, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        while (raw := _draw(DOMAIN, 11, k)) >= limit:
            k += 1
        k += 1
        j = raw % n
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected
    assert sorted(items) == list(range(10))
    single: list[int] = [5]
    stream = CaseStream(DOMAIN, 11)
    stream.shuffle(single)
    assert single == [5]
    assert stream.next_u64() == _draw(DOMAIN, 11, 0)  # a one-item shuffle draws nothing


def test_unit_divides_one_draw_by_two_to_the_64() -> None:
    stream = CaseStream(DOMAIN, 3)
    assert [stream.unit() for _ in range(3)] == [_draw(DOMAIN, 3, k) / 2**64 for k in range(3)]


def test_nearest_rounds_halves_up() -> None:
    assert [nearest(x) for x in (0.5, 1.5, 2.5, -0.5, -1.5, 2.49, 99.5)] == [1, 2, 3, 0, -1, 2, 100]


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_seed_must_be_u64(seed: int) -> None:
    with pytest.raises(ValueError, match="unsigned 64-bit"):
        CaseStream(DOMAIN, seed)


def test_below_needs_a_positive_bound() -> None:
    with pytest.raises(ValueError, match="below"):
        CaseStream(DOMAIN, 0).below(0)
