"""The optional packages exporters need, imported on demand with an install hint when missing.

Nothing here imports an optional package at module import time, so ``evoledger.exporters`` can be
imported (and its names listed) on an installation without the ``export`` extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from evoledger.ledger.errors import InputError

__all__ = ["EXPORT_EXTRA_HINT", "MINARI_EXTRA_HINT", "require_minari", "require_pyarrow"]

EXPORT_EXTRA_HINT: Final = "pip install 'evoledger[export]'"
"""How to install what HuggingFace-style exports need (pyarrow to write, datasets to load)."""

MINARI_EXTRA_HINT: Final = "pip install 'evoledger[minari]'"
"""How to install what Minari exports need (minari, pyarrow and Pillow, which minari's storage imports)."""


def _require(module: str, purpose: str, hint: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f"{purpose} needs the Python package {module!r}, which is not installed ({exc}); {hint}"
        ) from None


def require_pyarrow() -> ModuleType:
    """``pyarrow``, or an :class:`InputError` telling how to install the ``export`` extra."""
    return _require("pyarrow", "exporting a dataset", EXPORT_EXTRA_HINT)


def require_minari() -> ModuleType:
    """``minari`` (with what its Arrow storage imports), or an :class:`InputError` naming the ``minari`` extra."""
    for module in ("pyarrow", "PIL", "minari"):
        _require(module, "exporting a Minari dataset", MINARI_EXTRA_HINT)
    return importlib.import_module("minari")
