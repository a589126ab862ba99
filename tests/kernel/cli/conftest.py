"""Fixtures shared by the CLI tests: a short working folder and a machine without bubblewrap."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.execution.isolation import probe_bwrap


@pytest.fixture
def cwd(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh working folder under /tmp: short, since Unix socket paths are length-limited."""
    root = Path(tempfile.mkdtemp(prefix="evc-", dir="/tmp"))
    monkeypatch.chdir(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A PATH on which bubblewrap cannot be found (the Python interpreter is still found by its full path)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    probe_bwrap.cache_clear()
    yield
    probe_bwrap.cache_clear()
