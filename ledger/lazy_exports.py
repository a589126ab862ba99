"""Lazy re-exports (PEP 562): the one rule by which a package re-exports names without importing them up front.

A package lists ``name -> defining module`` in ``_LAZY`` (and, for mypy, the same imports under
``if TYPE_CHECKING:``), then binds the two module hooks this returns::

    __getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

A name is imported on first access and then kept in the package's namespace, so later lookups are plain attribute
reads. ``submodules`` are re-exported as modules (``projections.run_state``). This keeps ``evoledger-session`` and
``evoledger --help`` free of pydantic, numpy and gymnasium (``tests/test_lazy_exports.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    namespace: MutableMapping[str, Any],
    lazy: Mapping[str, str],
    submodules: frozenset[str] = frozenset(),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose ``namespace`` re-exports ``lazy`` names lazily."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the module hook's own name)
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *lazy, *submodules})

    return __getattr__, __dir__
