"""Where family environments live: one folder per family under :func:`environments_root`.

The root is ``$EVOLEDGER_ENVS`` when set, else ``$XDG_CACHE_HOME/evoledger/envs``, else ``~/.cache/evoledger/envs``.
A family's venv is the folder named after its extra (``dm-control``, ``nle``); an install in progress builds in a
hidden sibling (``.dm-control.tmp-<pid>-<random>``) and is renamed into place only once complete, so the folder
either holds a whole environment or does not exist.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import evoledger
from evoledger.ledger.errors import ConfigError

__all__ = [
    "ENVS_VARIABLE",
    "environments_root",
    "evoledger_source",
    "family_folder",
    "folder_bytes",
    "site_packages",
    "venv_python",
]

ENVS_VARIABLE: Final = "EVOLEDGER_ENVS"
"""The environment variable that moves every family environment (tests and CI point it elsewhere)."""
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def environments_root(environ: Mapping[str, str] | None = None) -> Path:
    """The folder holding one venv per family (see the module docstring); not created here."""
    source = os.environ if environ is None else environ
    if source.get(ENVS_VARIABLE):
        return Path(source[ENVS_VARIABLE]).expanduser().absolute()
    cache = source.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser().absolute() / "evoledger" / "envs"


def family_folder(family: str, root: Path | None = None) -> Path:
    """The venv folder of ``family`` (an extra's name); ConfigError for a name that cannot be a folder name."""
    if not _NAME.fullmatch(family):
        raise ConfigError(f"family name {family!r} cannot name an environment folder (lower-case letters, digits, -._)")
    return (root or environments_root()) / family


def venv_python(folder: Path) -> Path:
    """The venv's own interpreter (a symlink to its base interpreter: never resolve it, that loses the venv)."""
    return folder / "bin" / "python"


def site_packages(folder: Path) -> Path:
    """The venv's ``site-packages`` folder (for this interpreter's ``X.Y``)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return folder / "lib" / version / "site-packages"


def evoledger_source() -> Path:
    """The folder that *is* this process's ``evoledger`` package (the repository root), links resolved."""
    return Path(evoledger.__file__).resolve().parent


def folder_bytes(folder: Path) -> int:
    """The bytes of the regular files under ``folder`` (links are counted as links, never followed)."""
    total = 0
    for parent, _, files in os.walk(folder):  # does not descend into linked folders (site-packages/evoledger)
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                continue
    return total
