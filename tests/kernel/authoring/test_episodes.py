"""``check_episode_request``: the arguments of ``Benchmark.episodes`` every Benchmark refuses the same way."""

from __future__ import annotations

import pytest
from evoledger.kernel.authoring import check_episode_request
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import InputError

BAD = [
    (("test", 0, 1), "split 'test' is not one of train, validation, assessment"),
    ((["train"], 0, 1), "is not one of"),
    (("train", -1, 1), "seed -1 must be a non-negative integer"),
    (("train", True, 1), "seed True must be"),
    (("train", 0, -2), "episode count -2 must be a non-negative integer"),
    (("train", 0, 2.0), "episode count 2.0 must be"),
]


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_requests_are_input_errors(args: tuple[object, object, object], message: str) -> None:
    split, seed, count = args
    with pytest.raises(InputError, match=message):
        check_episode_request(split, seed=seed, count=count)


def test_good_requests_pass() -> None:
    for split in ("train", "validation", "assessment"):
        check_episode_request(split, seed=0, count=0)
        check_episode_request(split, seed=2**63, count=10)


@pytest.mark.parametrize("name", ["toy-counter", "cartpole"])
@pytest.mark.parametrize(("args", "message"), BAD[:1] + BAD[2:3] + BAD[4:5])
def test_packaged_benchmarks_refuse_them_alike(name: str, args: tuple[object, object, object], message: str) -> None:
    benchmark = default_registry().make(name, {})
    split, seed, count = args
    with pytest.raises(InputError, match=message):
        benchmark.episodes(split, seed=seed, count=count)  # type: ignore[arg-type]
