"""Registries of things loaded by name: Benchmarks (and later exporters and agents).

The kernel never imports a concrete Benchmark statically. A Benchmark module in the
``evoledger.benchmarks`` package declares a module-level ``BENCHMARKS`` mapping of names to factories
(``factory(**config) -> Benchmark``); adding a Benchmark is adding one module. Names follow one scheme,
``family/task`` (``classic-control/cartpole``, ``mujoco/half-cheetah``). The module's ``CATALOG``
(:class:`~evoledger.kernel.authoring.CatalogEntry` rows) gives each name its family, one-line summary, the optional
extra it needs and its older names (aliases, such as ``cartpole``), which resolve everywhere a name is accepted,
including names recorded in existing ledgers. Discovery imports the family modules only, never their heavy
packages, so every Benchmark is listed whether its extra is installed or not; building one whose extra is missing
raises :class:`~evoledger.ledger.errors.MissingExtraError` (exit 2, the exact install command).
Third-party packages add theirs through the ``evoledger.benchmarks`` entry-point group: one Benchmark
(``name = "pkg.module:factory"``) or a whole family module like ours (``family = "pkg.module"``).
Where the *user* types a name (``evoledger run``, ``evaluate --benchmark``), an import string
``"pkg.module:factory"`` is accepted too, which is how tests register ad-hoc Benchmarks without touching the
package. A name read from a record (a ledger someone else may have written) is resolved with
:func:`resolve_recorded`: only through the registry of installed Benchmarks, never by importing, unless the user
says so (``--trust-recorded-benchmark``); otherwise :class:`UntrustedRecordError`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Final

from evoledger.kernel.authoring import Benchmark, CatalogEntry
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


@dataclass(frozen=True, slots=True)
class _Found:
    """What discovery found: factories and catalogue rows by registered name, and each alias's name."""

    factories: dict[str, BenchmarkFactory | str] = field(default_factory=dict)
    entries: dict[str, CatalogEntry] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)


class BenchmarkRegistry:
    """Benchmarks by name, discovered lazily from packages and entry points on first use."""

    def __init__(
        self,
        packages: tuple[str, ...] = ("evoledger.benchmarks",),
        entry_point_group: str | None = "evoledger.benchmarks",
    ) -> None:
        self._packages = packages
        self._group = entry_point_group
        self._found: _Found | None = None

    def _discover(self) -> _Found:
        if self._found is not None:
            return self._found
        import pkgutil  # only now: the executor imports this module before it starts its workers

        found = _Found()
        for package_name in self._packages:
            package = importlib.import_module(package_name)
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    _add_module(found, importlib.import_module(f"{package_name}.{info.name}"))
        if self._group:
            for ep in metadata.entry_points(group=self._group):
                if not is_import_string(ep.value):  # a whole family module, with its CATALOG
                    _add_module(found, importlib.import_module(ep.value))
                elif ep.name not in found.factories:
                    found.factories[ep.name] = ep.value
                    found.entries[ep.name] = CatalogEntry(ep.name, _family_of(ep.name, "plugin"), f"from {ep.value}")
        for entry in found.entries.values():
            for alias in entry.aliases:
                if alias in found.factories or alias in found.aliases:
                    raise ConfigError(f"benchmark alias {alias!r} of {entry.name!r} is already a name or an alias")
                found.aliases[alias] = entry.name
        self._found = found
        return found

    def names(self) -> list[str]:
        """Every registered name (``family/task``, aliases excluded), sorted, whether its extra is installed or not."""
        return sorted(self._discover().factories)

    def entries(self) -> list[CatalogEntry]:
        """The catalogue row of every registered name, sorted by name."""
        found = self._discover()
        return [found.entries[name] for name in sorted(found.entries)]

    def families(self) -> list[str]:
        """Every family that registers a Benchmark, sorted."""
        return sorted({entry.family for entry in self._discover().entries.values()})

    def knows(self, name: str) -> bool:
        """Whether ``name`` is a registered name or an alias of one (an import string is not)."""
        found = self._discover()
        return name in found.factories or name in found.aliases

    def canonical(self, name: str) -> str:
        """The registered name ``name`` is, or is an alias of; else :class:`UnknownNameError` with close matches."""
        found = self._discover()
        if name in found.factories:
            return name
        if name in found.aliases:
            return found.aliases[name]
        raise _unknown(name, found, self.families())

    def entry(self, name: str) -> CatalogEntry:
        """The catalogue row of ``name`` (a registered name or an alias)."""
        return self._discover().entries[self.canonical(name)]

    def check_installed(self, name: str) -> None:
        """Raise :class:`MissingExtraError` (the install command) if ``name`` is registered and its extra is missing.

        Names that are not registered (import strings, unknown names) are left to the factory to judge.
        """
        if self.knows(name):
            entry = self.entry(name)
            if entry.extra is not None:
                entry.extra.require(entry.name)

    def factory(self, name: str, *, allow_import: bool = True) -> BenchmarkFactory:
        """The factory registered under ``name`` (or named by an import string, if ``allow_import``).

        Raises :class:`MissingExtraError` when the Benchmark's optional extra is not installed.
        """
        if is_import_string(name):
            if not allow_import:
                raise UntrustedRecordError(
                    f"the recorded Benchmark {name!r} is an import string: importing it would run code named by "
                    "the record; pass --trust-recorded-benchmark if you trust whoever wrote it"
                )
            return load_object(name)  # type: ignore[no-any-return]
        canonical = self.canonical(name)
        self.check_installed(canonical)
        factories = self._discover().factories
        entry = factories[canonical]
        if isinstance(entry, str):
            entry = load_object(entry)
            factories[canonical] = entry
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
_CLOSE: Final = 5
"""How many close names an unknown Benchmark name's error suggests."""


def _family_of(name: str, default: str) -> str:
    """The ``family`` of a ``family/task`` name, else ``default``."""
    family, slash, _ = name.partition("/")
    return family if slash and family else default


def _add_module(found: _Found, module: Any) -> None:
    """Register a module's ``BENCHMARKS`` with their ``CATALOG`` rows (a name without one gets a plain row)."""
    declared: Mapping[str, BenchmarkFactory] = getattr(module, "BENCHMARKS", {})
    catalog: Iterable[CatalogEntry] = getattr(module, "CATALOG", ())
    rows = {entry.name: entry for entry in catalog}
    unregistered = sorted(rows.keys() - declared.keys())
    if unregistered:
        raise ConfigError(
            f"{module.__name__}: CATALOG lists {unregistered[0]!r}, which its BENCHMARKS does not register"
        )
    family = module.__name__.rpartition(".")[2].replace("_", "-")
    for name, factory in declared.items():
        if name in found.factories:
            raise ConfigError(f"benchmark name {name!r} is registered twice (second in {module.__name__})")
        found.factories[name] = factory
        summary = (getattr(factory, "__doc__", None) or "").strip().partition("\n")[0]
        found.entries[name] = rows.get(name) or CatalogEntry(name, _family_of(name, family), summary)


def _unknown(name: str, found: _Found, families: list[str]) -> UnknownNameError:
    """An unknown Benchmark name: the few closest names (matched whole and by task) and how to list them all."""
    lowered = name.lower()
    by_task = {n.partition("/")[2] or n: n for n in found.factories}
    close = [
        *difflib.get_close_matches(lowered, list(found.factories), n=_CLOSE, cutoff=0.6),
        *(by_task[t] for t in difflib.get_close_matches(lowered, list(by_task), n=_CLOSE, cutoff=0.6)),
        *(found.aliases[a] for a in difflib.get_close_matches(lowered, list(found.aliases), n=_CLOSE, cutoff=0.6)),
        *(n for n in sorted(found.factories) if lowered and lowered in n),
    ]
    unique = list(dict.fromkeys(close))[:_CLOSE]
    see = (
        f"List them with: evoledger benchmarks --family FAMILY (one of {', '.join(families)}) "
        "or evoledger benchmarks --search WORD."
    )
    return UnknownNameError("benchmark", name, found.factories, close=unique, see=see)


def _model_named(factory: BenchmarkFactory, exc: ValidationError) -> type[BaseModel] | None:
    """The config model a factory's :class:`ValidationError` names, looked up where the factory was defined.

    A ``functools.partial`` (one function serving a family's tasks) is looked up where its function was defined.
    """
    defined = getattr(factory, "func", factory)
    found = getattr(defined, "__globals__", {}).get(exc.title)
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
