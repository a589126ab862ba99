"""Package hygiene: the distribution lists every package, and every package curates its public names."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {"tests", "bench", "build", ".venv", ".git"}


def _package_dirs() -> list[str]:
    found = []
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts and (rel.parts[0] in SKIP_DIRS or rel.parts[0].startswith(".") or "__pycache__" in rel.parts):
            continue
        found.append(".".join(("evoledger", *rel.parts)))
    return sorted(found)


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = sorted(config["tool"]["setuptools"]["packages"])
    assert listed == _package_dirs()


@pytest.mark.parametrize("package", _package_dirs())
def test_every_package_curates_all(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{package} must define __all__"
    for name in exported:
        assert hasattr(module, name), f"{package}.__all__ names {name!r}, which does not exist"
    assert len(exported) == len(set(exported)), f"{package}.__all__ lists a name twice"


def test_no_utils_modules() -> None:
    offenders = [p for p in ROOT.rglob("utils.py") if not set(p.relative_to(ROOT).parts) & SKIP_DIRS]
    assert not offenders


@pytest.mark.parametrize(
    "path", sorted(p for p in ROOT.rglob("*.py") if not set(p.relative_to(ROOT).parts) & SKIP_DIRS)
)
def test_modules_stay_small(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 450, f"{path.relative_to(ROOT)} has {lines} lines; split it (one concept per module)"


def test_modules_parse_without_syntax_errors() -> None:
    for path in ROOT.rglob("*.py"):
        if not set(path.relative_to(ROOT).parts) & SKIP_DIRS:
            ast.parse(path.read_text(encoding="utf-8"))
