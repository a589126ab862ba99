"""What a family environment was made from (its marker file), and whether it is still current.

Each family venv holds ``evoledger-env.json``: the requirements it was installed from and their digest, the Python
``X.Y`` and base interpreter, the evoledger source folder it serves (linked into its ``site-packages``), the
distributions installed with their versions, the family's Benchmark names, when it was made and how long that took.
:func:`family_status` compares it with what the family declares *now*: a venv made from other requirements, another
Python or another evoledger source is ``stale`` (``evoledger env install FAMILY`` again); no venv at all is
``missing``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from evoledger.kernel.family_env.place import evoledger_source, family_folder, venv_python

__all__ = [
    "MARKER_NAME",
    "WORKER_REQUIREMENTS",
    "EnvironmentState",
    "EnvironmentStatus",
    "Marker",
    "family_status",
    "install_requirements",
    "read_marker",
    "requirements_digest",
]

MARKER_NAME: Final = "evoledger-env.json"
_MARKER_MAX_BYTES: Final = 1 << 20
WORKER_REQUIREMENTS: Final[tuple[str, ...]] = ("pydantic>=2.6", "gymnasium>=1.0", "numpy>=1.26", "orjson>=3.8")
"""What an execution worker imports besides the family's own packages (measured: a worker that built a Benchmark
and ran Episodes had imported nothing else outside the standard library). Never the Host's sqlite-utils, click, rich,
zstandard or pandas. Lower bounds as in pyproject.toml (tests/kernel/family_env checks they agree)."""

EnvironmentState = Literal["installed", "stale", "missing"]


def install_requirements(family_requirements: tuple[str, ...]) -> tuple[str, ...]:
    """Everything a family venv is installed from: the family's requirements, then what a worker needs."""
    return (*family_requirements, *WORKER_REQUIREMENTS)


def requirements_digest(requirements: tuple[str, ...]) -> str:
    """``sha256:<hex>`` of the requirement strings as declared (order kept: pip reads them in order)."""
    return "sha256:" + hashlib.sha256(json.dumps(list(requirements)).encode()).hexdigest()


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class Marker:
    """The contents of a family venv's ``evoledger-env.json``."""

    family: str
    requirements: tuple[str, ...]
    requirements_digest: str
    python: str
    """The ``X.Y`` of the interpreter the venv was made from."""
    base_python: str
    source: str
    """The evoledger source folder the venv's ``site-packages/evoledger`` links to."""
    created: str
    """When the install finished (ISO 8601, UTC)."""
    install_seconds: float
    versions: dict[str, str] = field(default_factory=dict)
    """Installed distribution name -> version."""
    benchmarks: tuple[str, ...] = ()
    """The family's Benchmark names and aliases when it was installed: lets an executor skip loading the registry
    for a Benchmark of no installed family (:func:`~.families.worker_python`). Not part of being current."""

    def to_json(self) -> str:
        """The marker file's text."""
        data = {**asdict(self), "requirements": list(self.requirements), "benchmarks": list(self.benchmarks)}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read_marker(folder: Path) -> Marker | None:
    """The marker of the venv in ``folder``, or ``None`` when it is absent, oversized or unreadable."""
    path = folder / MARKER_NAME
    try:
        if path.is_symlink() or path.stat().st_size > _MARKER_MAX_BYTES:
            return None
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return Marker(
            family=str(data["family"]),
            requirements=tuple(str(r) for r in data["requirements"]),
            requirements_digest=str(data["requirements_digest"]),
            python=str(data["python"]),
            base_python=str(data["base_python"]),
            source=str(data["source"]),
            created=str(data["created"]),
            install_seconds=float(data["install_seconds"]),
            versions={str(k): str(v) for k, v in dict(data["versions"]).items()},
            benchmarks=tuple(str(n) for n in data.get("benchmarks", ())),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class EnvironmentStatus:
    """One family environment as found on disk: ``installed`` (current), ``stale`` or ``missing``, and why."""

    family: str
    state: EnvironmentState
    path: Path
    reason: str
    """Why it is stale or missing (with the command that fixes it); empty when installed."""
    marker: Marker | None = None

    @property
    def python(self) -> Path:
        """The venv's interpreter (a symlink: never resolve it)."""
        return venv_python(self.path)


def family_status(family: str, family_requirements: tuple[str, ...], root: Path | None = None) -> EnvironmentStatus:
    """Whether ``family``'s venv exists and was made from ``family_requirements``, this Python and this source."""
    folder = family_folder(family, root)
    again = f"run: evoledger env install {family}"
    if not folder.is_dir():
        return EnvironmentStatus(family, "missing", folder, f"no environment at {folder}; {again}")
    marker = read_marker(folder)

    def stale(why: str) -> EnvironmentStatus:
        return EnvironmentStatus(family, "stale", folder, f"stale: {why}; {again}", marker)

    if marker is None:
        return stale(f"{folder / MARKER_NAME} is missing or unreadable")
    if marker.requirements_digest != requirements_digest(install_requirements(family_requirements)):
        return stale(f"the family's requirements changed since it was installed ({', '.join(marker.requirements)})")
    if marker.python != _python_version():
        return stale(f"it was made for Python {marker.python}, this is Python {_python_version()}")
    if marker.source != str(evoledger_source()):
        return stale(f"it serves the evoledger source at {marker.source}, not this one at {evoledger_source()}")
    if not venv_python(folder).exists():  # exists() follows the link: its base interpreter must be there too
        return stale(f"its interpreter {venv_python(folder)} (from {marker.base_python}) no longer runs")
    return EnvironmentStatus(family, "installed", folder, "", marker)
