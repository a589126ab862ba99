"""A coding-agent CLI's own configuration folder, isolated per Run: created before the launch, removed after it.

A CLI reads its configuration, rules, MCP servers, plugins and session history from a home folder named by a variable
(``CODEX_HOME``, ``CLAUDE_CONFIG_DIR``, ``KIMI_CODE_HOME``, ``QODER_CONFIG_DIR``). Left at the user's default, two Runs
share that state and a user's personal setup changes what the Agent can do. An :class:`AgentHome` points the variable
at a fresh folder instead, and copies into it only the login files the CLI needs (``seed_files``, looked up in the
user's own folder: the first of ``seed_from`` that exists). The folder lives in a private per-user directory under the
system's temporary directory, never inside the run directory (a run directory may be bundled and shared, and the
login files must not travel with it), and is removed when the Agent has ended.

A folder the user names (``--agent-option home=PATH``) is used as it is: never seeded, never removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evoledger.ledger.errors import ConfigError

__all__ = ["AgentHome", "isolated_home"]


@dataclass(frozen=True, slots=True)
class AgentHome:
    """The folder ``variable`` names for the Agent process, and whether the Host made it (and removes it)."""

    variable: str
    path: Path
    owned: bool = True
    seed_from: tuple[str, ...] = ()
    """Folders (``$VARIABLE`` or ``~/...``, read from the Host's environment) to copy the login files from."""
    seed_files: tuple[str, ...] = ()
    """Names (files or folders) copied from the first existing ``seed_from`` folder, when present there."""

    def prepare(self, environ: Mapping[str, str] | None = None) -> None:
        """Create the folder (private to the user) and copy the login files in. A user-named folder is only created."""
        if not self.owned:
            self.path.mkdir(parents=True, exist_ok=True)
            return
        _private_dir(self.path.parent)
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.path)  # a leftover of a crashed Host: start clean
        self.path.mkdir(mode=0o700)
        source = self._seed_source(os.environ if environ is None else environ)
        if source is None:
            return
        for name in self.seed_files:
            found = source / name
            if found.is_dir():
                shutil.copytree(found, self.path / name)
            elif found.is_file():
                shutil.copyfile(found, self.path / name)
                (self.path / name).chmod(0o600)

    def _seed_source(self, environ: Mapping[str, str]) -> Path | None:
        for entry in self.seed_from:
            if entry.startswith("$"):
                value = environ.get(entry[1:], "")
            elif entry.startswith("~/"):
                home = environ.get("HOME", "")
                value = home + entry[1:] if home else ""
            else:
                value = entry
            if value and Path(value).is_dir() and Path(value).resolve() != self.path.resolve():
                return Path(value)
        return None

    def remove(self) -> None:
        """Delete the folder the Host made (with the copied login files); a user-named folder stays."""
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)


def _private_dir(path: Path) -> None:
    """Make ``path`` a directory only this user can enter, refusing one that is a link or someone else's."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConfigError(
            f"{path} must be a directory private to you (mode 700, yours, not a link) to hold an Agent's login "
            "files; remove it, or name the Agent's folder yourself with --agent-option home=PATH"
        )


def isolated_home(variable: str, agent: str, workspace: Path, user_home: str | None = None) -> AgentHome:
    """The home of Agent ``agent`` for the Run whose workspace is ``workspace``: ``user_home`` when given, else a
    Host-made folder in ``$TMPDIR/evoledger-agent-homes-<uid>/`` named after the workspace (one per Run and Agent)."""
    if user_home is not None:
        return AgentHome(variable, Path(user_home).expanduser(), owned=False)
    tag = hashlib.sha256(str(workspace.absolute()).encode("utf-8")).hexdigest()[:16]
    parent = Path(tempfile.gettempdir()) / f"evoledger-agent-homes-{os.getuid()}"
    return AgentHome(variable, parent / f"{agent}-{tag}")
