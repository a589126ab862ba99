"""Packages that re-export lazily (PEP 562): what they name is what they load, and importing them loads nothing."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _lazy_packages() -> list[str]:
    found = []
    for init in sorted(ROOT.rglob("__init__.py")):
        rel = init.parent.relative_to(ROOT)
        if rel.parts and rel.parts[0] in {"tests", "bench", "build"}:
            continue
        if "_LAZY: Final" in init.read_text(encoding="utf-8"):
            found.append(".".join(("evoledger", *rel.parts)))
    return found


LAZY_PACKAGES = _lazy_packages()


def _type_checking_imports(package: str) -> dict[str, str]:
    """``name -> module`` of the ``if TYPE_CHECKING:`` imports in ``package``'s ``__init__.py`` (what mypy sees)."""
    path = ROOT.joinpath(*package.split(".")[1:], "__init__.py")
    names: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                assert statement.module, ast.dump(statement)
                for alias in statement.names:
                    names[alias.asname or alias.name] = statement.module
    return names


def test_the_lazy_packages_are_found() -> None:
    assert {"evoledger.ledger", "evoledger.kernel.session", "evoledger.kernel.execution"} <= set(LAZY_PACKAGES)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_what_mypy_sees_is_what_is_loaded(package: str) -> None:
    module = importlib.import_module(package)
    declared = _type_checking_imports(package)
    lazy = dict(module._LAZY)
    submodules: frozenset[str] = getattr(module, "_SUBMODULES", frozenset())
    assert {n: m for n, m in declared.items() if n not in submodules} == lazy
    assert set(lazy) | set(submodules) <= set(module.__all__)
    for name, source in lazy.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_importing_a_lazy_package_loads_none_of_its_exports(package: str) -> None:
    module = importlib.import_module(package)
    sources = sorted({m for m in module._LAZY.values() if m != "evoledger.ledger.errors"})
    code = f"import sys, {package}; print([m for m in {sources!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_unknown_names_are_attribute_errors() -> None:
    ledger = importlib.import_module("evoledger.ledger")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ledger.nope
    assert "Ledger" in dir(ledger)


def test_the_verify_function_wins_over_its_module() -> None:
    """``evoledger.ledger.verify`` is the function even when the module of the same name is imported first."""
    code = (
        "import evoledger.ledger.verify as first\n"
        "from evoledger.ledger.verify import Problem\n"
        "from evoledger.ledger import verify\n"
        "import evoledger.ledger\n"
        "print(callable(verify), callable(evoledger.ledger.verify), first is verify)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["True", "True", "True"]
