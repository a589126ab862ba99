"""The one-way layering of docs/architecture.md, enforced by reading every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# package -> the evoledger packages it may import (besides itself and the root `evoledger` module)
ALLOWED: dict[str, set[str]] = {
    "ledger": set(),
    "projections": {"ledger"},
    "kernel": {"ledger", "projections"},
    "exporters": {"ledger", "projections"},
}
BENCHMARK_ALLOWED_PREFIXES = ("evoledger.kernel.authoring", "evoledger.ledger.errors", "evoledger.benchmarks")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [n for n in names if n == "evoledger" or n.startswith("evoledger.")]


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_lower_layers(package: str) -> None:
    violations = []
    for path in _modules(package):
        for name in _imports(path):
            parts = name.split(".")
            if len(parts) < 2:
                continue
            target = parts[1]
            if target != package and target not in ALLOWED[package] and target in {*ALLOWED, "benchmarks"}:
                violations.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not violations, "layering violated:\n" + "\n".join(violations)


def test_benchmarks_import_only_the_authoring_api() -> None:
    violations = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules("benchmarks")
        for name in _imports(path)
        if name != "evoledger" and not name.startswith(BENCHMARK_ALLOWED_PREFIXES)
    ]
    assert not violations, "benchmarks must import only evoledger.kernel.authoring:\n" + "\n".join(violations)


def test_private_helpers_are_not_imported_across_packages() -> None:
    violations = []
    for package in [*ALLOWED, "benchmarks"]:
        for path in _modules(package):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evoledger."):
                    other = node.module.split(".")[1]
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    if other != package and private:
                        violations.append(f"{path.relative_to(ROOT)} imports {private} from {node.module}")
    assert not violations, "\n".join(violations)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The import reader must notice imports, or the tests above would pass vacuously."""
    module = tmp_path / "m.py"
    module.write_text("from evoledger.kernel import x\nimport evoledger.projections.run_state\n", encoding="utf-8")
    assert _imports(module) == ["evoledger.kernel", "evoledger.projections.run_state"]
