"""Which registered families have their own environment, and which interpreter a Benchmark's workers start from.

A family declares ``Extra(name, modules, own_environment=OwnEnvironment(requirements, reason))`` in its module's
``CATALOG``. Its Host side (spec, spaces, Episodes, Feedback, Programs) builds in the main environment; its workers,
which make and step its Environments, start from the family's venv (:func:`worker_python`).

The precedence, per Benchmark: the main environment when the family's modules import there (someone installed the
family into it: nothing else to start), else the family's venv when it is installed and current, else
:class:`~evoledger.ledger.errors.MissingExtraError` naming ``evoledger env install FAMILY``. Import strings
(``pkg.module:factory``) always run in the main environment: only registered names carry a family.
"""

from __future__ import annotations

import difflib
import sys

from evoledger.kernel.authoring import Extra
from evoledger.kernel.family_env.marker import family_status, read_marker
from evoledger.kernel.family_env.place import environments_root
from evoledger.kernel.registry import BenchmarkRegistry, default_registry, is_import_string
from evoledger.ledger.errors import ConfigError, UnknownNameError

__all__ = [
    "family_benchmarks",
    "family_extras",
    "host_environment_problem",
    "own_environment_extra",
    "own_environment_families",
    "worker_python",
]


def family_extras(registry: BenchmarkRegistry | None = None) -> dict[str, Extra]:
    """Every extra a registered Benchmark needs, by name."""
    extras: dict[str, Extra] = {}
    for entry in (registry or default_registry()).entries():
        if entry.extra is not None:
            extras.setdefault(entry.extra.name, entry.extra)
    return dict(sorted(extras.items()))


def own_environment_families(registry: BenchmarkRegistry | None = None) -> dict[str, Extra]:
    """The extras whose family gets its own environment, by name."""
    return {name: extra for name, extra in family_extras(registry).items() if extra.own_environment is not None}


def own_environment_extra(family: str, registry: BenchmarkRegistry | None = None) -> Extra:
    """The extra of ``family``; UnknownNameError (with the closest names) or ConfigError for a shared family."""
    extras = family_extras(registry)
    own = sorted(name for name, extra in extras.items() if extra.own_environment is not None)
    extra = extras.get(family)
    if extra is None:
        close = difflib.get_close_matches(family, list(extras), n=3, cutoff=0.5)
        see = f"Families with their own environment: {', '.join(own) or '(none)'} (see: evoledger env list)."
        raise UnknownNameError("family", family, extras, close=close, see=see)
    if extra.own_environment is None:
        raise ConfigError(
            f"family {family!r} shares the main environment and has no environment of its own; install it with: "
            f"{extra.install_command} (families with their own environment: {', '.join(own) or 'none'})"
        )
    return extra


def family_benchmarks(family: str, registry: BenchmarkRegistry | None = None) -> tuple[str, ...]:
    """The registered names and aliases of ``family``'s Benchmarks (recorded in its venv's marker)."""
    served: list[str] = []
    for entry in (registry or default_registry()).entries():
        if entry.extra is not None and entry.extra.name == family:
            served += [entry.name, *entry.aliases]
    return tuple(sorted(served))


def _may_serve(name: str) -> bool:
    """Whether some installed family venv may serve Benchmark ``name``: its marker lists the name, or a name of the
    same ``family/`` prefix (a task added since). Reads the markers only: no registry, nothing imported."""
    root = environments_root()
    try:
        folders = [entry for entry in root.iterdir() if not entry.name.startswith(".")]
    except OSError:
        return False
    prefix = name.partition("/")[0] + "/"
    for folder in folders:
        marker = read_marker(folder)
        if marker is None or not marker.benchmarks or name in marker.benchmarks:
            return True  # an unreadable marker, or one that names no Benchmark: look it up
        if "/" in name and any(served.startswith(prefix) for served in marker.benchmarks):
            return True
    return False


def worker_python(name: str, registry: BenchmarkRegistry | None = None) -> str:
    """The interpreter the workers of Benchmark ``name`` start from (see the module docstring for the precedence).

    Cheap unless an installed family venv may serve ``name`` (its marker lists it or a name of the same ``family/``
    prefix): only then is the registry loaded, before the workers start.
    """
    if is_import_string(name) or not _may_serve(name):
        return sys.executable
    registry = registry or default_registry()
    if not registry.knows(name):
        return sys.executable  # the worker reports the unknown name
    entry = registry.entry(name)
    extra = entry.extra
    if extra is None or extra.own_environment is None or extra.missing_module() is None:
        return sys.executable
    status = family_status(extra.name, extra.own_environment.requirements)
    if status.state != "installed":
        extra.require(entry.name)  # raises MissingExtraError: evoledger env install FAMILY
    return str(status.python)


def host_environment_problem(name: str, registry: BenchmarkRegistry | None = None) -> str | None:
    """Why this process (the Host) cannot make Benchmark ``name``'s Environments itself, or ``None`` when it can.

    It cannot when the family has its own environment and its modules do not import here: its Environments exist only
    in workers started from the family's venv. Host-side stepping (``check_benchmark`` in-process, ``replay
    --render``, ``report --render-episodes``) says so instead of failing on the missing import.
    """
    if is_import_string(name) or not _may_serve(name):
        return None  # without its venv such a family's Benchmark cannot even be built (Extra.require)
    registry = registry or default_registry()
    if not registry.knows(name):
        return None
    entry = registry.entry(name)
    extra = entry.extra
    if extra is None or extra.own_environment is None:
        return None
    missing = extra.missing_module()
    if missing is None:
        return None
    return (
        f"{entry.name}'s Environments run only in workers started from the {extra.name!r} family's own environment "
        f"({extra.own_environment.reason}); its module {missing!r} is not installed where this runs (that "
        f"environment's interpreter: evoledger env path {extra.name} --python)"
    )
