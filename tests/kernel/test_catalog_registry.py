"""The catalogue side of the registry: family modules, aliases, extras that may be missing, cheap discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from evoledger.kernel.registry import BenchmarkRef, BenchmarkRegistry, default_registry, resolve_recorded
from evoledger.ledger.errors import ConfigError, MissingExtraError, UnknownNameError
from evoledger.tests.support.fake_family import FAKE_EXTRA, FAKE_NAME, install_fake_family

HEAVY: tuple[str, ...] = ("Box2D", "pygame", "mujoco", "minigrid", "networkx", "highway_env", "crafter")
"""The families' heavy packages (their extras' modules), beside any an installed family's CatalogEntry names."""


def _heavy_modules() -> list[str]:
    named = {m for e in default_registry().entries() if e.extra is not None for m in e.extra.modules}
    return sorted(named | set(HEAVY))


def _python(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **environment}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_listing_every_family_imports_no_heavy_package() -> None:
    code = textwrap.dedent(
        f"""
        import json, sys
        from evoledger.kernel.registry import default_registry
        rows = [(e.name, e.extra is None or e.extra.installed) for e in default_registry().entries()]
        print(json.dumps({{"rows": rows, "loaded": sorted(set({_heavy_modules()!r}) & set(sys.modules))}}))
        """
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["loaded"] == []
    assert [name for name, _ in found["rows"]] == default_registry().names()


def test_every_family_is_listed_and_refused_cleanly_when_its_heavy_packages_cannot_be_imported(tmp_path: Path) -> None:
    """As on a machine without the extras (and no family venv): every module imports, every name is listed, building
    one says how: the pip command, or for a family with its own environment the evoledger env command."""
    code = textwrap.dedent(
        f"""
        import json, sys
        for name in {_heavy_modules()!r}:
            sys.modules[name] = None  # import fails, and find_spec says it is not there
        from evoledger.kernel.registry import default_registry
        from evoledger.ledger.errors import MissingExtraError
        registry = default_registry()
        refused = {{}}
        for entry in registry.entries():
            if entry.extra is None:
                continue
            try:
                registry.make(entry.name)
            except MissingExtraError as exc:
                refused[entry.name] = str(exc)
        print(json.dumps({{"names": registry.names(), "refused": refused}}))
        """
    )
    done = _python(code, EVOLEDGER_ENVS=str(tmp_path))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["names"] == default_registry().names()
    with_extras = [e for e in default_registry().entries() if e.extra is not None]
    assert sorted(found["refused"]) == sorted(e.name for e in with_extras)
    for entry in with_extras:
        assert entry.extra is not None
        fix = (
            f"evoledger env install {entry.extra.name}"
            if entry.extra.own_environment is not None
            else f"pip install 'evoledger[{entry.extra.name}]'"
        )
        assert fix in found["refused"][entry.name]


def test_a_family_module_from_an_entry_point_is_listed_with_its_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = install_fake_family(tmp_path)
    monkeypatch.syspath_prepend(str(family.site))
    registry = BenchmarkRegistry()
    entry = registry.entry("fake-old")
    assert entry.name == FAKE_NAME
    assert entry.family == "fake"
    assert "fake" in registry.families()
    assert registry.knows("fake-old")
    assert not registry.knows("fake/nothing")
    assert entry.extra is not None
    assert not entry.extra.installed
    with pytest.raises(MissingExtraError, match=rf"install it with: pip install 'evoledger\[{FAKE_EXTRA}\]'"):
        registry.make("fake-old")
    with pytest.raises(MissingExtraError):
        registry.check_installed(FAKE_NAME)
    registry.check_installed("no-such-benchmark")  # not registered: left to the factory
    monkeypatch.syspath_prepend(str(family.heavy))
    assert registry.make("fake-old").spec.id == FAKE_NAME


def _package(root: Path, name: str, source: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    (root / name / "family.py").write_text(textwrap.dedent(source))


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            """
            from evoledger.benchmarks.toy import make_toy_counter
            from evoledger.kernel.authoring import CatalogEntry
            BENCHMARKS = {"f/a": make_toy_counter}
            CATALOG = (CatalogEntry("f/b", "f", "not registered"),)
            """,
            "CATALOG lists 'f/b', which its BENCHMARKS does not register",
        ),
        (
            """
            from evoledger.benchmarks.toy import make_toy_counter
            from evoledger.kernel.authoring import CatalogEntry
            BENCHMARKS = {"f/a": make_toy_counter, "f/b": make_toy_counter}
            CATALOG = (CatalogEntry("f/a", "f", "a", aliases=("f/b",)),)
            """,
            "alias 'f/b' of 'f/a' is already a name or an alias",
        ),
    ],
    ids=["catalog-row-without-benchmark", "alias-is-a-name"],
)
def test_an_inconsistent_family_module_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, message: str
) -> None:
    package = f"evocat_{tmp_path.name.replace('-', '_')}"
    _package(tmp_path, package, source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=message):
        BenchmarkRegistry(packages=(package,), entry_point_group=None).names()


def test_a_name_without_a_catalogue_row_gets_its_family_from_the_name_or_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = f"evocat_{tmp_path.name.replace('-', '_')}"
    _package(
        tmp_path,
        package,
        """
        from evoledger.benchmarks.toy import make_toy_counter
        BENCHMARKS = {"mine/a": make_toy_counter, "plain": make_toy_counter}
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = BenchmarkRegistry(packages=(package,), entry_point_group=None)
    assert [(e.name, e.family) for e in registry.entries()] == [("mine/a", "mine"), ("plain", "family")]
    assert registry.entry("plain").summary.startswith("``toy-counter``")  # the factory's first docstring line


def test_a_run_recorded_under_an_old_name_resolves_by_its_alias() -> None:
    for old in ("cartpole", "taxi", "toy-counter", "frozen-lake-8x8"):
        benchmark = resolve_recorded(BenchmarkRef(name=old))  # a record's name: registry only, aliases included
        assert benchmark.spec.id == old
        assert benchmark.spec == default_registry().make(default_registry().canonical(old)).spec


def test_an_unknown_name_suggests_by_task_and_names_every_family() -> None:
    with pytest.raises(UnknownNameError) as caught:
        default_registry().make("toy-text/frozen-lak")
    assert caught.value.suggestion == "toy-text/frozen-lake"
    for family in default_registry().families():
        assert family in str(caught.value)
    with pytest.raises(UnknownNameError) as by_task:
        default_registry().make("acrobt")
    assert by_task.value.suggestion == "classic-control/acrobot"


def test_the_settings_model_of_a_partial_factory_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A family often registers one function per task through functools.partial: its --set keys are still known."""
    package = f"evocat_{tmp_path.name.replace('-', '_')}"
    _package(
        tmp_path,
        package,
        """
        import functools
        from evoledger.benchmarks.toy import make_toy_counter
        from pydantic import BaseModel, ConfigDict

        class PartialSettings(BaseModel):
            model_config = ConfigDict(extra="forbid")
            max_episode_steps: int = 5

        def _make(task, **config):
            PartialSettings.model_validate(config)
            return make_toy_counter(**config)

        BENCHMARKS = {"p/a": functools.partial(_make, "a")}
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = BenchmarkRegistry(packages=(package,), entry_point_group=None)
    model = registry.config_model("p/a")
    assert model is not None
    assert model.__name__ == "PartialSettings"
    with pytest.raises(ConfigError, match=r"valid keys: max_episode_steps"):
        registry.make("p/a", {"max_episode_step": 3})


def test_a_worker_without_the_extra_reports_the_install_command_as_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An executor built by hand (nothing checked first): the worker's MissingExtraError is the user's, exit 2."""
    from evoledger.kernel.execution import LocalExecutor

    family = install_fake_family(tmp_path)
    monkeypatch.setenv("PYTHONPATH", family.pythonpath(installed=False))
    with (
        pytest.raises(ConfigError, match=rf"needs the optional extra '{FAKE_EXTRA}'.*pip install") as caught,
        LocalExecutor(BenchmarkRef(name=FAKE_NAME), isolation="local"),
    ):
        pass
    assert caught.value.exit_code == 2
