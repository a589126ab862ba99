"""What a Benchmark module declares about its family before anything heavy is imported: extras and catalogue rows.

A family of Benchmarks (MuJoCo, MiniGrid, ...) often needs an optional extra (``pip install 'evoledger[mujoco]'``).
Its module must stay importable without it, so that ``evoledger benchmarks`` can list every Benchmark of every
family, installed or not. The module therefore declares, next to its ``BENCHMARKS`` factories:

* one :class:`Extra` per optional dependency set, whose :meth:`Extra.require` the factories call first (it raises
  :class:`~evoledger.ledger.errors.MissingExtraError`, a one-line error with the exact install command), and
* ``CATALOG``: one :class:`CatalogEntry` per registered name, holding the facts a listing shows without building
  the Benchmark, and the Policy limits its Programs need where a command line sets none (``default_limits``).

The heavy package (``mujoco``, ``minigrid``, ...) is imported inside the factory, after ``require()``.

A family whose dependencies cannot share the main environment (dm-control needs ``mujoco<4``, nle pins gymnasium
1.2.0) declares ``Extra(name, modules, own_environment=OwnEnvironment(requirements, reason))``: ``evoledger env
install <name>`` makes it a venv (:mod:`evoledger.kernel.family_env`) and its workers start from that venv's
interpreter. Its factory then builds the Benchmark in the Host *without* the heavy package (spec, spaces from static
tables, ``episodes()``, ``feedback()``, Programs); only ``make_environment()``, called in a worker, imports it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field

from evoledger.ledger.errors import MissingExtraError

__all__ = ["CatalogEntry", "Extra", "OwnEnvironment"]


@dataclass(frozen=True, slots=True)
class OwnEnvironment:
    """A family's own Python environment: the venv ``evoledger env install <extra name>`` makes for its workers."""

    requirements: tuple[str, ...]
    """pip requirement strings of the family venv, e.g. ``("dm-control==1.0.50", "mujoco>=3.2,<4")`` (what a worker
    itself needs is added)."""
    reason: str
    """One line: why the family cannot share the main environment."""


@dataclass(frozen=True, slots=True)
class Extra:
    """An optional extra of the ``evoledger`` distribution and the modules that show it is installed."""

    name: str
    """The extra's name in ``pyproject.toml`` (``pip install 'evoledger[<name>]'``); with :attr:`own_environment`,
    the family name of ``evoledger env install <name>``."""
    modules: tuple[str, ...]
    """Top-level import names that must all be importable."""
    own_environment: OwnEnvironment | None = None
    """Set when the family's workers run in a venv of their own instead of the main environment."""

    @property
    def install_command(self) -> str:
        """The exact command that installs this extra (``evoledger env install`` for an own environment)."""
        if self.own_environment is not None:
            return f"evoledger env install {self.name}"
        return f"pip install 'evoledger[{self.name}]'"

    def _environment_problem(self) -> str | None:
        """Why the family's own venv cannot serve (stale or missing), or ``None`` when it is installed and current."""
        if self.own_environment is None:
            return "it has no environment of its own"
        from evoledger.kernel.family_env.marker import family_status  # standard library only

        status = family_status(self.name, self.own_environment.requirements)
        return None if status.state == "installed" else status.reason

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
        """Whether every module of the extra can be found, or its own environment is installed and current."""
        return self.missing_module() is None or (
            self.own_environment is not None and self._environment_problem() is None
        )

    def require(self, what: str) -> None:
        """Raise :class:`MissingExtraError` naming ``what`` (a Benchmark name) unless the extra is installed.

        For an own-environment family the error's fix is ``evoledger env install <name>`` (and says why a venv that
        exists is stale)."""
        missing = self.missing_module()
        if missing is None:
            return
        if self.own_environment is None:
            raise MissingExtraError(what, self.name, missing)
        problem = self._environment_problem()
        if problem is not None:
            detail = "not installed" if problem.startswith("no environment") else problem.partition(";")[0]
            why = f"its workers run in a venv of their own: {detail}"
            raise MissingExtraError(what, self.name, missing, install=self.install_command, why=why)


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
