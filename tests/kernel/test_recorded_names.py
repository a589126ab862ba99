"""A Benchmark name read from a record is resolved by registry name only: an import string is never imported.

Importing stays for names the user types; a record's import string needs the user's say-so (``trusted``), and
the execution workers obey the same rule (``LocalExecutor(..., allow_import=False)``).
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import (
    BenchmarkRef,
    UntrustedRecordError,
    is_import_string,
    resolve_benchmark,
    resolve_recorded,
)


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: Path) -> str:
    """A module whose import leaves ``marker`` behind (so an import is visible), on sys.path and PYTHONPATH."""
    name = f"recorded_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\n"
        "from evoledger.benchmarks.toy import make_toy_counter as make\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{':'.join(sys.path)}")
    return name


def test_a_recorded_import_string_is_refused_before_anything_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    name = f"{_module(tmp_path, monkeypatch, marker)}:make"
    assert is_import_string(name)
    with pytest.raises(UntrustedRecordError, match="--trust-recorded-benchmark"):
        resolve_recorded(BenchmarkRef(name=name))
    assert not marker.exists()
    with pytest.raises(UntrustedRecordError):
        LocalExecutor(BenchmarkRef(name=name), allow_import=False)
    assert not marker.exists()  # the worker refused it too


def test_a_registered_name_resolves_from_a_record_and_a_trusted_import_string_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_recorded(BenchmarkRef(name="toy-counter")).spec
    marker = tmp_path / "imported"
    name = f"{_module(tmp_path, monkeypatch, marker)}:make"
    assert resolve_recorded(BenchmarkRef(name=name), trusted=True).spec
    assert marker.exists()
    assert resolve_benchmark(BenchmarkRef(name=name)).spec  # a name the user typed: imported as before
