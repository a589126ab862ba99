"""Registries of things loaded by name: Benchmarks (and later exporters and agents).

The kernel never imports a concrete Benchmark statically. A Benchmark module in the
``evoledger.benchmarks`` package declares a module-level ``BENCHMARKS`` mapping of names to factories
(``factory(**config) -> Benchmark``); adding a Benchmark is adding one module. Third-party packages
add theirs through the ``evoledger.benchmarks`` entry-point group (``name = "pkg.module:factory"``).
Where the *user* types a name (``evoledger run``, ``evaluate --benchmark``), an import string
``"pkg.module:factory"`` is accepted too, which is how tests register ad-hoc Benchmarks without touching the
package. A name read from a record (a ledger someone else may have written) is resolved with
:func:`resolve_recorded`: only through the registry of installed Benchmarks, never by importing, unless the user
says so (``--trust-recorded-benchmark``); otherwise :class:`UntrustedRecordError`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, Final

from evoledger.kernel.authoring import Benchmark
from evoledger.ledger.errors import ConfigError, InputError, UnknownNameError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "BenchmarkRef",
    "BenchmarkRegistry",
    "UntrustedRecordError",
    "default_registry",
    "is_import_string",
    "load_object",
    "resolve_benchmark",
    "resolve_recorded",
]

BenchmarkFactory = Callable[..., Benchmark]


def load_object(import_string: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module_name, sep, attr = import_string.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"import string {import_string!r} must look like 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import {module_name!r} from {import_string!r}: {exc}") from exc
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise InputError(f"module {module_name!r} has no attribute {attr!r} (from {import_string!r})") from None
    return obj


class UntrustedRecordError(ConfigError):
    """A record names code (an import string, a ``command:`` Agent) that is run only when the user says so."""


def is_import_string(name: str) -> bool:
    """Whether ``name`` would be imported (``"pkg.module:factory"``) rather than looked up in a registry."""
    return ":" in name


class BenchmarkRef(BaseModel):
    """How to rebuild a Benchmark in any process: a registry name (or import string) and its config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    config: dict[str, Any] = Field(default_factory=dict)


class BenchmarkRegistry:
    """Benchmarks by name, discovered lazily from packages and entry points on first use."""

    def __init__(
        self,
        packages: tuple[str, ...] = ("evoledger.benchmarks",),
        entry_point_group: str | None = "evoledger.benchmarks",
    ) -> None:
        self._packages = packages
        self._group = entry_point_group
        self._factories: dict[str, BenchmarkFactory | str] | None = None

    def _discover(self) -> dict[str, BenchmarkFactory | str]:
        if self._factories is not None:
            return self._factories
        import pkgutil  # only now: the executor imports this module before it starts its workers

        found: dict[str, BenchmarkFactory | str] = {}
        for package_name in self._packages:
            package = importlib.import_module(package_name)
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
                if info.name.startswith("_"):
                    continue
                module = importlib.import_module(f"{package_name}.{info.name}")
                declared: Mapping[str, BenchmarkFactory] = getattr(module, "BENCHMARKS", {})
                for name, factory in declared.items():
                    if name in found:
                        raise ConfigError(f"benchmark name {name!r} is registered twice (second in {module.__name__})")
                    found[name] = factory
        if self._group:
            for ep in metadata.entry_points(group=self._group):
                found.setdefault(ep.name, ep.value)
        self._factories = found
        return found

    def names(self) -> list[str]:
        """All registered names, sorted."""
        return sorted(self._discover())

    def factory(self, name: str, *, allow_import: bool = True) -> BenchmarkFactory:
        """The factory registered under ``name`` (or named by an import string, if ``allow_import``)."""
        if is_import_string(name):
            if not allow_import:
                raise UntrustedRecordError(
                    f"the recorded Benchmark {name!r} is an import string: importing it would run code named by "
                    "the record; pass --trust-recorded-benchmark if you trust whoever wrote it"
                )
            return load_object(name)  # type: ignore[no-any-return]
        factories = self._discover()
        if name not in factories:
            raise UnknownNameError("benchmark", name, factories)
        entry = factories[name]
        if isinstance(entry, str):
            entry = load_object(entry)
            factories[name] = entry
        return entry

    def make(self, name: str, config: Mapping[str, Any] | None = None, *, allow_import: bool = True) -> Benchmark:
        """Build the Benchmark ``name`` with ``config`` (a mapping of its typed configuration fields).

        ``allow_import=False`` refuses an import string (:class:`UntrustedRecordError`) before importing anything.
        """
        factory = self.factory(name, allow_import=allow_import)
        try:
            benchmark = factory(**dict(config or {}))
        except ValidationError as exc:
            raise ConfigError(_settings_error(name, dict(config or {}), exc, _model_named(factory, exc))) from None
        except TypeError as exc:
            raise ConfigError(f"invalid configuration {dict(config or {})!r} for benchmark {name!r}: {exc}") from exc
        if not isinstance(benchmark, Benchmark):
            raise ConfigError(f"factory for {name!r} returned {type(benchmark).__name__}, which is not a Benchmark")
        return benchmark

    def config_model(self, name: str) -> type[BaseModel] | None:
        """The pydantic model of the ``--set`` settings of Benchmark ``name`` (``None`` when it declares none).

        A factory names it as its ``config_model`` attribute; otherwise it is found by calling the factory with one
        setting no model has, which a factory that validates its settings first refuses naming its model.
        """
        factory = self.factory(name)
        declared = getattr(factory, "config_model", None)
        if isinstance(declared, type) and issubclass(declared, BaseModel):
            return declared
        try:
            factory(**{_PROBE: None})
        except ValidationError as exc:
            return _model_named(factory, exc)
        except TypeError:
            return None
        return None


_PROBE: Final = "__evoledger_no_such_setting__"


def _model_named(factory: BenchmarkFactory, exc: ValidationError) -> type[BaseModel] | None:
    """The config model a factory's :class:`ValidationError` names, looked up where the factory was defined."""
    found = getattr(factory, "__globals__", {}).get(exc.title)
    return found if isinstance(found, type) and issubclass(found, BaseModel) else None


def _settings_error(name: str, config: dict[str, Any], exc: ValidationError, model: type[BaseModel] | None) -> str:
    """One line: which ``--set`` is wrong, why, the closest key, and every valid key."""
    keys = sorted(model.model_fields) if model is not None else []
    problems = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"]) or "(settings)"
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(key, keys, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"--set {key}: benchmark {name!r} has no such setting{hint}")
        else:
            given = f"={config[key]}" if key in config else ""
            problems.append(f"--set {key}{given}: {error['msg']}")
    listing = ", ".join(keys) if keys else "none"
    return f"{'; '.join(problems)}; valid keys: {listing} (see: evoledger benchmarks {name})"


_DEFAULT = BenchmarkRegistry()


def default_registry() -> BenchmarkRegistry:
    """The process-wide registry of packaged and installed Benchmarks."""
    return _DEFAULT


def resolve_benchmark(
    ref: BenchmarkRef, registry: BenchmarkRegistry | None = None, *, allow_import: bool = True
) -> Benchmark:
    """Build the Benchmark a :class:`BenchmarkRef` the user gave names (see :func:`resolve_recorded` for records)."""
    return (registry or _DEFAULT).make(ref.name, ref.config, allow_import=allow_import)


def resolve_recorded(
    ref: BenchmarkRef, registry: BenchmarkRegistry | None = None, *, trusted: bool = False
) -> Benchmark:
    """Build the Benchmark a record names: by registry name only, unless the user ``trusted`` the record.

    Raises :class:`UntrustedRecordError` (nothing imported) for an import string from an untrusted record.
    """
    return resolve_benchmark(ref, registry, allow_import=trusted)
