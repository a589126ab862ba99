"""What a Benchmark module declares about its family before anything heavy is imported: extras and catalogue rows.

A family of Benchmarks (MuJoCo, MiniGrid, ...) often needs an optional extra (``pip install 'evoledger[mujoco]'``).
Its module must stay importable without it, so that ``evoledger benchmarks`` can list every Benchmark of every
family, installed or not. The module therefore declares, next to its ``BENCHMARKS`` factories:

* one :class:`Extra` per optional dependency set, whose :meth:`Extra.require` the factories call first (it raises
  :class:`~evoledger.ledger.errors.MissingExtraError`, a one-line error with the exact install command), and
* ``CATALOG``: one :class:`CatalogEntry` per registered name, holding the facts a listing shows without building
  the Benchmark, and the Policy limits its Programs need where a command line sets none (``default_limits``).

The heavy package (``mujoco``, ``minigrid``, ...) is imported inside the factory, after ``require()``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field

from evoledger.ledger.errors import MissingExtraError

__all__ = ["CatalogEntry", "Extra", "OwnEnvironment"]


@dataclass(frozen=True, slots=True)
class OwnEnvironment:
    """The Python environment of a family that cannot share the main one (``evoledger env install <name>``)."""

    requirements: tuple[str, ...]
    """pip requirement strings for the family venv, e.g. ``("dm-control==1.0.50", "mujoco>=3.2,<4")``."""
    reason: str
    """One line: why the family cannot share the main environment."""


@dataclass(frozen=True, slots=True)
class Extra:
    """An optional extra of the ``evoledger`` distribution and the modules that show it is installed."""

    name: str
    """The extra's name in ``pyproject.toml`` (``pip install 'evoledger[<name>]'``)."""
    modules: tuple[str, ...]
    """Top-level import names that must all be importable."""
    own_environment: OwnEnvironment | None = None
    """Set when the family runs its Environments in a venv of its own (workers start from that interpreter)."""

    @property
    def install_command(self) -> str:
        """The exact command that installs this extra."""
        return f"pip install 'evoledger[{self.name}]'"

    def missing_module(self) -> str | None:
        """The first of :attr:`modules` that cannot be found (without importing it), or ``None``."""
        for module in self.modules:
            try:
                if importlib.util.find_spec(module) is None:
                    return module
            except (ImportError, ValueError):
                return module
        return None

    @property
    def installed(self) -> bool:
        """Whether every module of the extra can be found."""
        return self.missing_module() is None

    def require(self, what: str) -> None:
        """Raise :class:`MissingExtraError` naming ``what`` (a Benchmark name) unless the extra is installed."""
        missing = self.missing_module()
        if missing is not None:
            raise MissingExtraError(what, self.name, missing)


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One registered Benchmark name as a listing shows it, known without building the Benchmark."""

    name: str
    """The registry name, ``family/task`` (for example ``mujoco/half-cheetah``)."""
    family: str
    """The family (``box2d``, ``mujoco``, ``minigrid``, ``babyai``, ``highway``, ``crafter``, ...)."""
    summary: str
    """One line: the upstream environment id and what the task is."""
    extra: Extra | None = None
    """The optional extra the Benchmark needs, or ``None`` when the core install runs it."""
    aliases: tuple[str, ...] = ()
    """Older names that resolve to this one."""
    default_limits: Mapping[str, float] = field(default_factory=dict, hash=False)
    """Policy limits (``PolicyLimits`` field names, e.g. ``{"act_timeout_seconds": 60.0}``) that ``evoledger run`` and
    ``evaluate`` use for this Benchmark where the command line gives none (a contest whose one ``act`` solves the
    whole case needs more than the usual 2 s). Recorded in the Run's config like any limit; the Python API's
    ``RunConfig`` and ``EvaluationConfig`` keep their own defaults."""
