"""Secret-keyed seeds: HMAC-SHA256 of the Run key under a label, and the key a user-given seed stands for."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from evoledger.kernel.authoring import derive_seed
from evoledger.kernel.authoring.keyed_seeds import RUN_KEY_BYTES, keyed_seed, new_run_key, run_key_from_seed

KEY = bytes(range(32))


def test_a_keyed_seed_is_the_first_8_bytes_of_hmac_sha256_under_the_joined_label() -> None:
    expected = hmac.new(KEY, b"policy/assessment/3", hashlib.sha256).digest()[:8]
    assert keyed_seed(KEY, "policy", "assessment", 3) == int.from_bytes(expected, "big")


def test_labels_separate_seeds_and_keys_separate_runs() -> None:
    labels: list[tuple[str | int, ...]] = [("environment", s) for s in ("train", "validation", "assessment")]
    labels += [("policy", s, i) for s in ("train", "validation", "assessment") for i in range(50)]
    labels += [("agent",)]
    seeds = [keyed_seed(KEY, *label) for label in labels]
    assert len(set(seeds)) == len(seeds)
    other = bytes(31) + b"\x01"
    assert not set(seeds) & {keyed_seed(other, *label) for label in labels}
    assert all(0 <= s < 2**64 for s in seeds)


def test_keyed_seeds_share_nothing_with_the_public_derivation() -> None:
    assert keyed_seed(KEY, "policy", "train", 0) != derive_seed(0, "policy", "train", 0)


@pytest.mark.parametrize("label", [(), ("a/b",), ("",), ("policy", "")])
def test_ambiguous_labels_are_refused(label: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="label parts"):
        keyed_seed(KEY, *label)


@pytest.mark.parametrize("key", [b"", bytes(31), bytes(33), "00" * 32, None])
def test_a_key_that_is_not_32_bytes_is_refused_without_echoing_it(key: object) -> None:
    with pytest.raises(ValueError, match="a Run key is 32 bytes") as raised:
        keyed_seed(key, "agent")  # type: ignore[arg-type]
    assert "00" * 8 not in str(raised.value)


def test_new_keys_are_random_and_the_source_is_injectable() -> None:
    assert new_run_key() != new_run_key()
    assert len(new_run_key()) == RUN_KEY_BYTES == 32
    assert new_run_key(lambda n: b"\x07" * n) == b"\x07" * 32
    with pytest.raises(ValueError, match="must return 32 bytes"):
        new_run_key(lambda n: b"short")


def test_a_seed_derives_a_fixed_key_that_is_not_a_plain_hash_of_it() -> None:
    assert run_key_from_seed(7) == run_key_from_seed(7)
    assert len({run_key_from_seed(s) for s in range(100)}) == 100
    assert run_key_from_seed(7) != hashlib.sha256(b"7").digest()
    with pytest.raises(ValueError, match="non-negative"):
        run_key_from_seed(-1)
    with pytest.raises(ValueError, match="non-negative"):
        run_key_from_seed(True)
