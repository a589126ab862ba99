"""The Agent's bubblewrap sandbox (``--agent-isolation bwrap``): the workspace and the session socket, nothing else.

An unsandboxed Agent runs as the Host's user in ``<run>/workspace``, so it could read ``../ledger.sqlite`` (the Run's
secret key, hence every held-out seed), ``../host/`` and the Host's signing key, read the Host's environment through
``/proc`` and signal the Host. Under :class:`AgentSandbox` the Agent's process runs as ``bwrap ... -- <argv>`` with:

- new user, pid, ipc and uts namespaces (and a new network namespace unless the adapter declares
  ``needs_network``: the coding-agent CLIs must reach their API); every capability dropped; ``--die-with-parent``;
- the whole filesystem read-only (``--ro-bind / /``), its own ``/dev`` and ``/proc`` (only the sandbox's processes
  are visible, so no Host pid can be read or signalled), a private ``/tmp`` and ``/dev/shm``;
- the run directory hidden under an empty tmpfs, then only ``<run>/workspace`` bound back read-write (but its
  ``skills/`` guides read-only), the control folder (the session socket) and the task file read-only, at the same
  paths;
- the user's evoledger folders (``$EVOLEDGER_HOME``, ``$XDG_CONFIG_HOME/evoledger``, ``~/.config/evoledger``) hidden
  under empty tmpfs and the Host's signing key file (wherever it is) masked by ``/dev/null``;
- what the Agent is told to run stays reachable under the private ``/tmp``: files named by absolute paths on its
  command line (a ``command:python3 /tmp/agent.py`` script, not its folder), the folders of its ``PATH`` and the
  Host's interpreter, read-only;
- the Session's private folder outside the run directory (the socket of a long run directory and the
  ``evoledger-session`` launcher: ``kernel.run.session_place``), read-only at the same path;
- the adapter's declared ``state_paths`` (a CLI's own configuration and session folder) bound read-write if they
  exist, so a coding-agent CLI can keep its login and history.

The environment is the supervisor's allow-listed one, handed to bwrap as its process environment (which it passes on
unchanged) rather than as ``--setenv`` arguments, so no API key ever appears in a command line.

The Agent's whole process tree lives in the sandbox's pid namespace: when bwrap (the leader of the Agent's process
group) ends, the kernel ends every process in it, including children that called ``setsid``. The supervisor's
group stop, timeout watchdog and marked-process sweep work unchanged.

``auto`` resolves to ``bwrap`` when the shared probe (:func:`~evoledger.kernel.execution.isolation.probe_bwrap`)
says a sandbox runs here, else to ``local`` with the reason (:func:`resolve_agent_isolation`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.kernel.execution.isolation import ISOLATIONS, Isolation, IsolationChoice, probe_bwrap, resolve_isolation
from evoledger.ledger.errors import ConfigError

__all__ = [
    "AGENT_ISOLATIONS",
    "AGENT_ISOLATION_INSTALL_HINT",
    "AgentIsolation",
    "AgentSandbox",
    "evoledger_key_folders",
    "expand_state_paths",
    "resolve_agent_isolation",
]

AgentIsolation = Isolation
"""The Agent's isolation takes the same values as the Policies' (one resolver serves both)."""
AGENT_ISOLATIONS: Final = ISOLATIONS
AGENT_ISOLATION_INSTALL_HINT: Final = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or use --agent-isolation local"
)
_TMPFS_BYTES: Final = 1024 * 1024 * 1024
"""The size of the Agent's private ``/tmp`` and ``/dev/shm`` (each)."""


def resolve_agent_isolation(requested: str) -> IsolationChoice:
    """Turn ``local`` / ``bwrap`` / ``auto`` into the Agent's isolation; ConfigError if ``bwrap`` cannot work."""
    return resolve_isolation(requested, option="--agent-isolation", hint=AGENT_ISOLATION_INSTALL_HINT)


def evoledger_key_folders(environ: dict[str, str] | None = None) -> list[Path]:
    """Every folder that may hold the user's evoledger keys: ``$EVOLEDGER_HOME``, the XDG one and the default."""
    env = dict(os.environ) if environ is None else environ
    folders = []
    if env.get("EVOLEDGER_HOME"):
        folders.append(Path(env["EVOLEDGER_HOME"]))
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and Path(xdg).is_absolute():
        folders.append(Path(xdg) / "evoledger")
    folders.append(Path.home() / ".config" / "evoledger")
    return folders


def expand_state_paths(entries: Iterable[str], env: Mapping[str, str]) -> list[Path]:
    """An adapter's ``state_paths`` as absolute paths: ``$NAME`` is the variable's value (skipped when unset),
    ``~/x`` is under the Agent's ``HOME``; anything else that is not absolute is skipped."""
    paths = []
    for entry in entries:
        if entry.startswith("$"):
            value = env.get(entry[1:], "")
        elif entry.startswith("~/") and env.get("HOME"):
            value = env["HOME"] + entry[1:]
        else:
            value = entry
        if value and Path(value).is_absolute():
            paths.append(Path(value))
    return paths


_PACKAGE_ROOT: Final = Path(__file__).resolve().parents[2]
"""The folder that is the ``evoledger`` package (the Agent's ``evoledger-session`` imports it)."""
_PACKAGE_FOLDER: Final = Path(os.path.abspath(__file__)).parents[2]
_IMPORT_FOLDER: Final = _PACKAGE_FOLDER.parent if _PACKAGE_FOLDER.name == "evoledger" else _PACKAGE_ROOT
"""The folder the Host imports ``evoledger`` from (the session launcher puts it on ``sys.path``)."""


def _reachable_under_tmp(argv: Sequence[str], search_path: str, hidden: list[Path]) -> list[str]:
    """Read-only binds that keep what the Agent is told to run reachable under the private ``/tmp``: files named by
    absolute paths on its command line, the folders of its ``PATH``, and what ``evoledger-session`` imports (the
    ``evoledger`` package and the Host's ``PYTHONPATH`` folders: a clone under ``/tmp`` must still import), never
    ``/tmp`` itself, nothing hidden."""
    tmp = Path("/tmp")
    wanted = [Path(os.path.abspath(word)) for word in argv if Path(word).is_absolute()]
    wanted = [path for path in wanted if path.is_file()]
    wanted += [Path(os.path.abspath(entry)) for entry in search_path.split(os.pathsep) if Path(entry).is_absolute()]
    python_path = os.environ.get("PYTHONPATH", "")
    wanted += [_PACKAGE_ROOT, *(Path(e) for e in python_path.split(os.pathsep) if Path(e).is_absolute())]
    wanted += [Path(sys.prefix), Path(sys.base_prefix), _IMPORT_FOLDER]  # what the session launcher runs
    binds: list[str] = []
    seen: set[Path] = set()
    for named in wanted:
        if named in seen or named == tmp or not named.is_relative_to(tmp) or not named.exists():
            continue
        seen.add(named)
        source = _absolute(named)
        if not _inside(source, hidden) and not _inside(named, hidden):
            binds += ["--ro-bind", str(source), str(named)]
    return binds


def _absolute(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


@dataclass(frozen=True)
class AgentSandbox:
    """Where one Agent may look: its ``workspace`` (read-write) inside the hidden ``run_root``.

    ``readable`` are paths under ``run_root`` bound back read-only (the control folder with the session socket, the
    task file); ``hidden_folders`` are covered by empty tmpfs (the evoledger key folders); ``hidden_files`` are
    masked by ``/dev/null`` (a signing key elsewhere). ``outside_readable`` are folders outside ``run_root`` bound
    read-only at the same path (the Session's private folder: socket and launcher); ``read_only`` are folders inside
    ``workspace`` the Agent may read but not change (the Agent Skills). ``bwrap`` is the binary; ``None``: the probed
    one.
    """

    run_root: Path
    workspace: Path
    readable: tuple[Path, ...] = ()
    hidden_folders: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    bwrap: str | None = None
    outside_readable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()

    def command(
        self, argv: Sequence[str], *, network: bool, state_paths: Sequence[Path] = (), search_path: str = ""
    ) -> list[str]:
        """``bwrap <options> -- argv``: ``network`` keeps the Host's network; ``state_paths`` stay writable;
        ``search_path`` is the Agent's ``PATH`` (its folders under ``/tmp`` stay readable)."""
        binary = self.bwrap
        if binary is None:
            binary, why = probe_bwrap()
            if binary is None:
                raise ConfigError(f"the Agent cannot be sandboxed: {why}; {AGENT_ISOLATION_INSTALL_HINT}")
        root, workspace = _absolute(self.run_root), _absolute(self.workspace)
        if not _inside(workspace, [root]) or workspace == root:
            raise ConfigError(f"the Agent workspace {str(workspace)!r} must lie inside the run directory {str(root)!r}")
        size = str(_TMPFS_BYTES)
        args = [binary, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not network:
            args.append("--unshare-net")
        args += ["--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm"]
        hidden = [_absolute(folder) for folder in self.hidden_folders]
        for path in (_absolute(p) for p in state_paths):  # before the hiding: never reopens a hidden folder
            if not _inside(path, [root, *hidden]) and path.exists():
                args += ["--bind", str(path), str(path)]
        for folder in hidden:
            if folder.is_dir() and not _inside(folder, [root]):
                args += ["--tmpfs", str(folder)]
        for file in (_absolute(f) for f in self.hidden_files):
            if file.is_file() and not _inside(file, [root, *hidden]):
                args += ["--ro-bind", "/dev/null", str(file)]
        args += _reachable_under_tmp(argv, search_path, [root, *hidden])
        for folder in (_absolute(p) for p in self.outside_readable):
            if folder.is_dir() and not _inside(folder, [root, *hidden]):
                args += ["--ro-bind", str(folder), str(folder)]
        args += ["--tmpfs", str(root), "--bind", str(workspace), str(workspace)]
        for path in (_absolute(p) for p in self.read_only):
            if _inside(path, [workspace]) and path != workspace and path.is_dir():
                args += ["--ro-bind", str(path), str(path)]
        for path in (_absolute(p) for p in self.readable):
            if _inside(path, [root]) and not _inside(path, [workspace]) and path.exists():
                args += ["--ro-bind", str(path), str(path)]
        args += ["--chdir", str(workspace), "--", *argv]
        return args
