"""A shipped Program's ``policy.py`` loaded in the test process, as a module of its own (not put in ``sys.modules``),
without leaving ``__pycache__`` inside the packaged Program directory."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load_program_module"]


def load_program_module(program: Path) -> ModuleType:
    """Execute ``program / "policy.py"`` and return it as a module."""
    spec = importlib.util.spec_from_file_location(
        f"_test_policy_{program.name.replace('-', '_')}", program / "policy.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # never leave __pycache__ inside a packaged Program directory
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module
