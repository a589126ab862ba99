"""``--backend`` and ``--ray-address``: refused in the user's words before anything starts, and Ray (slow to import)
is never imported unless the ``ray`` backend is chosen. Real CLI processes; Ray is hidden by a ``None`` module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_WITHOUT_RAY = "import sys; sys.modules['ray'] = None; from evoledger.kernel.cli import main; sys.exit(main())"


def _cli(*args: str, cwd: Path, without_ray: bool = False) -> subprocess.CompletedProcess[str]:
    code = _WITHOUT_RAY if without_ray else "import sys; from evoledger.kernel.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    "args",
    [["evaluate", "-n", "1"], ["run", "--episode-budget", "2"], ["replay", "runs/x", "--execute"]],
    ids=["evaluate", "run", "replay"],
)
def test_missing_ray_is_one_line_with_the_install_command(args: list[str], tmp_path: Path) -> None:
    if args[0] == "replay":
        (tmp_path / "runs" / "x").mkdir(parents=True)
    done = _cli(*args, "--backend", "ray", cwd=tmp_path, without_ray=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'evoledger[ray]'" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == (["runs"] if args[0] == "replay" else [])  # nothing created


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "-n", "1", "--ray-address", "auto"], "--ray-address 'auto' needs --backend ray"),
        (["replay", "runs/x", "--backend", "ray"], "pass --execute"),
    ],
    ids=["address-without-ray", "replay-without-execute"],
)
def test_a_backend_option_that_cannot_apply_is_refused(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "runs" / "x").mkdir(parents=True)
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_the_local_backend_never_imports_ray(tmp_path: Path) -> None:
    probe = """
import contextlib, io, json, sys
from evoledger.kernel.cli import main
for argv in (["--help"], ["evaluate", "--help"], ["run", "--help"], ["replay", "--help"], ["resume", "--help"]):
    sys.argv = ["evoledger", *argv]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main()
from evoledger.kernel.execution import open_executor
from evoledger.kernel.registry import BenchmarkRef
with open_executor(None, BenchmarkRef(name="toy-counter")) as executor:
    pass
print(json.dumps(sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
