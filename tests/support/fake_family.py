"""A Benchmark family installed the way a third-party package installs one, whose optional extra can be taken away.

:func:`install_fake_family` writes, under a folder, a distribution (``*.dist-info`` with an ``evoledger.benchmarks``
entry point naming a family module), that family module, and separately the module its extra needs. Put ``site`` on
``PYTHONPATH`` (or ``sys.path``) to register the family; add ``heavy`` as well to "install" its extra. The family's
one Benchmark, ``fake/task``, is a toy counter under its own spec id, built only after ``EXTRA.require``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FAKE_EXTRA", "FAKE_HEAVY_MODULE", "FAKE_NAME", "FakeFamily", "install_fake_family"]

FAKE_NAME = "fake/task"
FAKE_EXTRA = "fake-extra"
FAKE_HEAVY_MODULE = "evoledger_fake_heavy_dependency"
_FAMILY_MODULE = "evoledger_fake_family"

_SOURCE = f'''
"""A Benchmark family module as a third party writes one: importable without its heavy package."""

from typing import Any

from evoledger.kernel.authoring import CatalogEntry, Extra

EXTRA = Extra({FAKE_EXTRA!r}, ({FAKE_HEAVY_MODULE!r},))


def make_task(**config: Any) -> Any:
    EXTRA.require({FAKE_NAME!r})
    import {FAKE_HEAVY_MODULE}  # noqa: F401  (only after require(), as a family imports its heavy package)
    from evoledger.benchmarks.toy import make_toy_counter

    return _FakeTask(make_toy_counter(**config))


class _FakeTask:
    """The toy counter under the spec id {FAKE_NAME!r}."""

    def __init__(self, base: Any) -> None:
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    @property
    def spec(self) -> Any:
        return self._base.spec.model_copy(update={{"id": {FAKE_NAME!r}}})


BENCHMARKS = {{{FAKE_NAME!r}: make_task}}
SUMMARY = "a toy counter behind an extra that may be missing"
CATALOG = (CatalogEntry({FAKE_NAME!r}, "fake", SUMMARY, EXTRA, ("fake-old",)),)
'''


@dataclass(frozen=True)
class FakeFamily:
    site: Path
    """The folder holding the distribution and the family module."""
    heavy: Path
    """The folder holding the module the family's extra needs."""

    def pythonpath(self, *, installed: bool) -> str:
        """A ``PYTHONPATH`` for a subprocess: the family, its extra if ``installed``, then this process's path."""
        return os.pathsep.join([str(self.site), *([str(self.heavy)] if installed else []), *sys.path])


def install_fake_family(root: Path) -> FakeFamily:
    """Write the fake family's distribution, module and heavy dependency under ``root``."""
    site, heavy = root / "site", root / "heavy"
    dist = site / "evoledger_fake_family-0.1.dist-info"
    dist.mkdir(parents=True)
    heavy.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evoledger-fake-family\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[evoledger.benchmarks]\nfake = {_FAMILY_MODULE}\n")
    (site / f"{_FAMILY_MODULE}.py").write_text(_SOURCE, encoding="utf-8")
    (heavy / f"{FAKE_HEAVY_MODULE}.py").write_text("HEAVY = True\n", encoding="utf-8")
    return FakeFamily(site, heavy)
