"""The Benchmark registry: discovery by module, did-you-mean, import strings, configuration errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from evoledger.kernel.authoring import Benchmark
from evoledger.kernel.registry import (
    BenchmarkRef,
    BenchmarkRegistry,
    default_registry,
    load_object,
    resolve_benchmark,
)
from evoledger.ledger.errors import ConfigError, InputError, UnknownNameError
from pydantic import ValidationError

GYMNASIUM_NAMES = {  # today's names (aliases) and their family/task names
    "acrobot": "classic-control/acrobot",
    "blackjack": "toy-text/blackjack",
    "cartpole": "classic-control/cartpole",
    "cliff-walking": "toy-text/cliff-walking",
    "frozen-lake": "toy-text/frozen-lake",
    "frozen-lake-8x8": "toy-text/frozen-lake-8x8",
    "mountain-car": "classic-control/mountain-car",
    "mountain-car-continuous": "classic-control/mountain-car-continuous",
    "pendulum": "classic-control/pendulum",
    "taxi": "toy-text/taxi",
}


def test_packaged_benchmarks_are_listed_sorted() -> None:
    names = default_registry().names()
    assert names == sorted(names)
    assert set(names) >= set(GYMNASIUM_NAMES.values())
    assert not set(names) & set(GYMNASIUM_NAMES)  # aliases are not listed as names
    assert "gym_adapter" not in names
    assert "_shipped" not in names


@pytest.mark.parametrize(("alias", "name"), sorted(GYMNASIUM_NAMES.items()))
def test_every_packaged_name_and_its_alias_build_the_same_benchmark_with_the_old_id(alias: str, name: str) -> None:
    benchmark = default_registry().make(name)
    assert isinstance(benchmark, Benchmark)
    assert benchmark.spec.id == alias  # the spec (id, parameters digest) did not change with the name
    assert default_registry().make(alias).spec == benchmark.spec
    assert default_registry().canonical(alias) == name
    assert default_registry().entry(alias).aliases == (alias,)


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        ("cartpol", "classic-control/cartpole"),
        ("frozenlake", "toy-text/frozen-lake"),
        ("txi", "toy-text/taxi"),
        ("classic-control/cartpol", "classic-control/cartpole"),
    ],
)
def test_a_typo_is_an_unknown_name_error_with_a_suggestion(typo: str, suggestion: str) -> None:
    with pytest.raises(UnknownNameError) as caught:
        default_registry().make(typo)
    assert caught.value.suggestion == suggestion
    assert f"Did you mean {suggestion!r}?" in str(caught.value)
    assert "evoledger benchmarks --family FAMILY (one of " in str(caught.value)
    assert "classic-control" in str(caught.value)
    assert isinstance(caught.value, InputError)
    assert isinstance(caught.value, LookupError)


def test_an_unknown_name_lists_a_few_close_matches_not_every_name() -> None:
    with pytest.raises(UnknownNameError) as caught:
        default_registry().make("mountain")
    message = str(caught.value)
    assert "Close matches: classic-control/mountain-car, classic-control/mountain-car-continuous." in message
    assert "toy-text/taxi" not in message
    assert "evoledger benchmarks --search WORD" in message


def test_a_name_nothing_resembles_gets_no_suggestion() -> None:
    with pytest.raises(UnknownNameError) as caught:
        default_registry().factory("zzzzzzzzzzzz")
    assert caught.value.suggestion is None
    assert "Did you mean" not in str(caught.value)


def test_an_import_string_names_a_factory_directly() -> None:
    benchmark = default_registry().make("evoledger.benchmarks.classic_control:make_cartpole", {"max_episode_steps": 9})
    assert benchmark.spec.id == "cartpole"
    assert benchmark.spec.max_episode_steps == 9
    taxi = load_object("evoledger.benchmarks.toy_text:BENCHMARKS")["toy-text/taxi"]
    assert taxi is default_registry().factory("taxi")


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("no_such_module_xyz:factory", "cannot import"),
        ("evoledger.benchmarks.classic_control:make_nothing", "no attribute"),
        ("evoledger.benchmarks.classic_control:", "must look like"),
        (":make_cartpole", "must look like"),
    ],
)
def test_bad_import_strings_are_input_errors(ref: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        default_registry().make(ref)


def test_a_factory_that_returns_no_benchmark_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a Benchmark"):
        default_registry().make("builtins:dict", {"a": 1})


@pytest.mark.parametrize(
    ("name", "config", "fragments"),
    [
        ("frozen-lake", {"map_name": "9x9"}, ["9x9", "'4x4' or '8x8'", "frozen-lake"]),
        (
            "cartpole",
            {"max_episode_stpes": 10},
            ["max_episode_stpes", "no such setting", "did you mean 'max_episode_steps'"],
        ),
        ("pendulum", {"g": 0}, ["greater than 0"]),
        ("taxi", {"max_episode_steps": "many"}, ["max_episode_steps", "integer"]),
    ],
)
def test_bad_configuration_is_a_config_error_with_a_helpful_message(
    name: str, config: dict[str, object], fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        default_registry().make(name, config)
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_resolve_benchmark_rebuilds_from_a_ref() -> None:
    ref = BenchmarkRef(name="taxi", config={"is_rainy": True})
    benchmark = resolve_benchmark(ref)
    assert benchmark.spec.environment_parameters["is_rainy"] is True
    assert resolve_benchmark(ref).spec.parameters_digest == benchmark.spec.parameters_digest
    with pytest.raises(ValidationError):
        BenchmarkRef.model_validate({"name": "taxi", "settings": {}})


def _write_package(root: Path, name: str, modules: dict[str, str]) -> None:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, source in modules.items():
        (package / f"{module}.py").write_text(textwrap.dedent(source))


def test_a_registry_discovers_modules_of_its_packages_and_skips_private_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_package(
        tmp_path,
        "evoreg_demo_pkg",
        {
            "alpha": """
                from evoledger.benchmarks.classic_control import make_cartpole
                BENCHMARKS = {"demo-cartpole": make_cartpole}
            """,
            "_private": "BENCHMARKS = {'hidden': None}\n",
            "plain": "VALUE = 1\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = BenchmarkRegistry(packages=("evoreg_demo_pkg",), entry_point_group=None)
    assert registry.names() == ["demo-cartpole"]
    assert registry.make("demo-cartpole").spec.id == "cartpole"
    with pytest.raises(UnknownNameError, match="demo-cartpole"):
        registry.make("demo-cartpol")


def test_a_name_registered_twice_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = """
        from evoledger.benchmarks.classic_control import make_cartpole
        BENCHMARKS = {"same": make_cartpole}
    """
    _write_package(tmp_path, "evoreg_dup_pkg", {"one": source, "two": source})
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = BenchmarkRegistry(packages=("evoreg_dup_pkg",), entry_point_group=None)
    with pytest.raises(ConfigError, match="'same' is registered twice"):
        registry.names()
