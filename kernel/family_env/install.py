"""Install and remove family environments: a venv per family, made atomically.

:func:`install_environment` builds the venv in a hidden temporary sibling of its final folder: ``python -m venv
--without-pip`` (the main environment's pip installs into it with ``pip --python``: no pip copy per venv), the
family's requirements plus what a worker needs (:data:`~.marker.WORKER_REQUIREMENTS`), a link
``site-packages/evoledger`` to this evoledger source (the repository root *is* the package, so a ``.pth`` naming its
parent would not do), a check that a worker and the family's modules import there, then the marker. Only then is
the folder renamed into place (signals held for the two renames that swap an old venv out). Any failure, Ctrl-C
included, removes the temporary folder: a failed install leaves nothing, and the previous venv (if any) untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.kernel.family_env.marker import (
    MARKER_NAME,
    EnvironmentStatus,
    Marker,
    family_status,
    install_requirements,
    requirements_digest,
)
from evoledger.kernel.family_env.place import (
    environments_root,
    evoledger_source,
    family_folder,
    folder_bytes,
    site_packages,
    venv_python,
)
from evoledger.ledger.errors import InfraError

__all__ = ["InstallResult", "install_environment", "remove_environment", "update_benchmarks"]

_KEPT_LINES: Final = 12
"""How many of pip's last output lines a failed install quotes."""
_CHECK_TIMEOUT_SECONDS: Final = 300.0
_CHECK = """
import importlib, importlib.metadata as m, json, sys
import evoledger.kernel.execution.worker  # what a worker imports before it builds the Benchmark
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({d.metadata["Name"]: d.version for d in m.distributions()}))
"""
"""Run by the new venv's interpreter with ``-I`` (no PYTHONPATH, no user site): only the venv itself counts."""


@dataclass(frozen=True)
class InstallResult:
    """A finished install: the environment's status (``installed``), its size and how long it took."""

    status: EnvironmentStatus
    bytes: int
    seconds: float


def _pip_environment() -> dict[str, str]:
    """The Host's environment without what would make pip or the venv see the Host's packages."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, "PYTHONNOUSERSITE": "1"}


def _run(command: list[str], what: str, on_line: Callable[[str], None]) -> None:
    """Run ``command``, handing each output line to ``on_line``; InfraError quoting the last lines if it fails."""
    last: deque[str] = deque(maxlen=_KEPT_LINES)
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_pip_environment(),
        text=True,
        errors="replace",
    ) as process:
        assert process.stdout is not None  # PIPE was asked for
        try:
            for line in process.stdout:
                text = line.rstrip()
                if text:
                    last.append(text)
                    on_line(text)
        except BaseException:  # Ctrl-C, or on_line failed: pip must not go on writing into a folder being removed
            process.kill()
            raise
        code = process.wait()
    if code != 0:
        errors = [line for line in last if line.startswith("ERROR")]
        raise InfraError(f"{what} failed (exit status {code}): {' | '.join(errors or last)}")


def _check(python: Path, modules: tuple[str, ...]) -> dict[str, str]:
    """Import a worker and the family's modules in the new venv; the versions installed there."""
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", _CHECK, *modules],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            env=_pip_environment(),
            timeout=_CHECK_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InfraError(f"importing a worker in the new environment took over {_CHECK_TIMEOUT_SECONDS:g} s") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise InfraError(f"a worker cannot import in the new environment: {lines[-1] if lines else done.returncode}")
    versions = json.loads(done.stdout.strip().splitlines()[-1])
    return {str(k): str(v) for k, v in sorted(versions.items())}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM (delivered right after) while the final renames run."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _sweep_leftovers(root: Path, family: str) -> None:
    """Remove folders of ``family``'s earlier installs killed outright (their pid is gone) or of its removed venvs."""
    building, retired = f".{family}.tmp-", f".{family}.old-"
    for entry in root.iterdir():
        if entry.name.startswith(building):
            pid = entry.name[len(building) :].partition("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and Path(f"/proc/{pid}").exists():
                continue  # another install of the same family is running
        elif not entry.name.startswith(retired):
            continue
        shutil.rmtree(entry, ignore_errors=True)


def install_environment(
    family: str,
    family_requirements: tuple[str, ...],
    modules: tuple[str, ...] = (),
    *,
    benchmarks: tuple[str, ...] = (),
    root: Path | None = None,
    on_line: Callable[[str], None] = lambda line: None,
    clock: Callable[[], float] = time.monotonic,
) -> InstallResult:
    """Make (or remake) ``family``'s venv from ``family_requirements``; ``modules`` must import there afterwards.

    ``benchmarks``: the family's Benchmark names and aliases (recorded in the marker). ``on_line`` receives
    progress: a line per phase and every line pip prints. Replaces an existing venv of the family
    only once the new one is complete. Raises :class:`InfraError` (nothing left behind) when a step fails.
    """
    root = root or environments_root()
    final = family_folder(family, root)
    started = clock()
    root.mkdir(parents=True, exist_ok=True)
    _sweep_leftovers(root, family)
    building = Path(tempfile.mkdtemp(prefix=f".{family}.tmp-{os.getpid()}-", dir=root))
    try:
        building.chmod(0o755)  # as python -m venv makes it (mkdtemp makes 0700)
        requirements = install_requirements(family_requirements)
        on_line(f"creating a venv from {sys.executable} (Python {sys.version.split()[0]})")
        _run([sys.executable, "-m", "venv", "--without-pip", str(building)], "python -m venv", on_line)
        on_line(f"pip install {' '.join(requirements)}")
        pip = [sys.executable, "-m", "pip", "--python", str(venv_python(building)), "install", "--progress-bar", "off"]
        _run([*pip, *requirements], "pip install", on_line)
        (site_packages(building) / "evoledger").symlink_to(evoledger_source(), target_is_directory=True)
        on_line(f"linked site-packages/evoledger -> {evoledger_source()}; checking that a worker imports there")
        versions = _check(venv_python(building), modules)
        seconds = clock() - started
        marker = Marker(
            family=family,
            requirements=requirements,
            requirements_digest=requirements_digest(requirements),
            python=f"{sys.version_info.major}.{sys.version_info.minor}",
            base_python=sys.executable,
            source=str(evoledger_source()),
            created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            install_seconds=round(seconds, 1),
            versions=versions,
            benchmarks=benchmarks,
        )
        (building / MARKER_NAME).write_text(marker.to_json(), encoding="utf-8")
        _relocate_scripts(building, final)
        with _signals_held():
            retired = _retire(final, root, family)
            try:
                os.rename(building, final)
            except OSError:
                if retired is not None:  # put the previous venv back
                    os.rename(retired, final)
                raise
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    return InstallResult(family_status(family, family_requirements, root), folder_bytes(final), seconds)


def _relocate_scripts(building: Path, final: Path) -> None:
    """Point the venv's scripts (shebangs, activate) at its final folder instead of the temporary one."""
    old, new = str(building).encode(), str(final).encode()
    for script in (building / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            data = script.read_bytes()
            if old in data:
                script.write_bytes(data.replace(old, new))


def _retire(folder: Path, root: Path, family: str) -> Path | None:
    """Rename an existing ``folder`` out of the way (to be deleted); its new name, or ``None`` if there was none."""
    if not folder.exists() and not folder.is_symlink():
        return None
    retired = root / f".{family}.old-{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(folder, retired)
    return retired


def remove_environment(family: str, root: Path | None = None) -> Path | None:
    """Delete ``family``'s venv; the folder it was in, or ``None`` when there was none."""
    root = root or environments_root()
    folder = family_folder(family, root)
    retired = _retire(folder, root, family)  # renamed first: never a half-deleted venv under the family's name
    if retired is None:
        return None
    shutil.rmtree(retired, ignore_errors=True)
    return folder


def update_benchmarks(status: EnvironmentStatus, benchmarks: tuple[str, ...]) -> bool:
    """Record ``benchmarks`` in an installed venv's marker if it lists others (atomically); whether it did."""
    if status.marker is None or status.marker.benchmarks == benchmarks:
        return False
    marker = dataclasses.replace(status.marker, benchmarks=benchmarks)
    written = status.path / f".{MARKER_NAME}.{os.getpid()}"
    written.write_text(marker.to_json(), encoding="utf-8")
    os.replace(written, status.path / MARKER_NAME)
    return True
