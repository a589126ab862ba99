"""The ``>>>`` examples in the package's docstrings run, so the documentation cannot drift from the code.

Every module of the package (``tests/`` and ``bench/`` aside) whose text contains ``>>>`` is imported and its
examples are run with :mod:`doctest`. An example that cannot run on its own (it needs a Run on disk) says
``# doctest: +SKIP``.
"""

from __future__ import annotations

import doctest
import importlib
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {"tests", "bench", "build", ".venv", ".git"}


def _modules_with_examples() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if set(rel.parts) & SKIP_DIRS or "__pycache__" in rel.parts or rel.parts[0].startswith("."):
            continue
        if ">>>" in path.read_text(encoding="utf-8"):
            found.append(".".join(("evoledger", *rel.with_suffix("").parts)).removesuffix(".__init__"))
    return found


def _run_examples(module: types.ModuleType) -> tuple[doctest.TestResults, str]:
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=report.append)
    return runner.summarize(verbose=False), "".join(report)


def test_the_package_has_examples() -> None:
    assert len(_modules_with_examples()) >= 10


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name: str) -> None:
    results, report = _run_examples(importlib.import_module(name))
    assert results.failed == 0, report


def test_a_wrong_example_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "doctest_probe.py").write_text('def two():\n    """\n    >>> two()\n    3\n    """\n    return 2\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        results, report = _run_examples(importlib.import_module("doctest_probe"))
    finally:
        sys.modules.pop("doctest_probe", None)
    assert (results.failed, results.attempted) == (1, 1)
    assert "Expected:\n    3\nGot:\n    2" in report
