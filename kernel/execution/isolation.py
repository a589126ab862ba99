"""Isolation backends for Policy processes: ``local`` (plain processes) or ``bwrap`` (a bubblewrap sandbox).

With ``bwrap`` each worker launches its zygote (:mod:`~.zygote`) inside its own sandbox instead of forking it:
new user, pid, ipc, uts and network namespaces; a read-only view of ``/usr``, the interpreter's prefix and site
directories, and evoledger's own packages (at :data:`SANDBOX_LIBRARY`); a private ``/tmp`` and ``/dev/shm`` of
:data:`SANDBOX_TMPFS_BYTES` each; its own ``/proc`` and ``/dev``; nothing of the run directory; a cleared
environment (:func:`sandbox_environment`); and ``--die-with-parent``. The zygote is pid 1 of the sandbox
(``--as-pid-1``) and every capability is dropped (bubblewrap run by root would otherwise keep them inside the new
user namespace). Programs are copied per Episode into a worker-private directory that the sandbox sees read-only
at :data:`SANDBOX_PROGRAMS`. Only Policy-side code ever runs inside, so the Policy cannot see, signal or read its
worker, and whatever breaks the sandbox during an Episode is the Policy's doing.

A worker started from a family venv (:mod:`evoledger.kernel.family_env`) binds that venv at its own path and runs its
``bin/python`` unresolved, next to the base interpreter's prefix the venv's link points into.

``auto`` resolves to ``bwrap`` when the ``bwrap`` binary exists and a quick probe sandbox runs, else to
``local`` with the reason (:func:`resolve_isolation`). Asking for ``bwrap`` when it cannot work is a
:class:`ConfigError` with the install hint.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

import evoledger
from evoledger.ledger.errors import ConfigError, InfraError

__all__ = [
    "ISOLATIONS",
    "SANDBOX_LIBRARY",
    "SANDBOX_PROGRAMS",
    "SANDBOX_TMPFS_BYTES",
    "Isolation",
    "IsolationChoice",
    "bwrap_command",
    "probe_bwrap",
    "resolve_isolation",
    "sandbox_environment",
]

Isolation = Literal["local", "bwrap", "auto"]
ISOLATIONS: Final[tuple[str, ...]] = get_args(Isolation)
SANDBOX_LIBRARY: Final = "/opt/evoledger-lib"
"""Where evoledger's own packages are mounted inside the sandbox (first on its ``PYTHONPATH``)."""
SANDBOX_PROGRAMS: Final = "/program"
"""Where the worker's per-Episode Program copies appear inside the sandbox (read-only)."""
SANDBOX_TMPFS_BYTES: Final = 256 * 1024 * 1024
"""The size of the sandbox's private ``/tmp`` and of its ``/dev/shm`` (each)."""
INSTALL_HINT: Final = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or use --isolation local"

_NAMESPACES: Final = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net")
_TOP_LEVEL: Final = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC_FILES: Final = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives")
_SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
_KEPT_PREFIXES: Final = ("OPENBLAS_", "MKL_", "OMP_", "GOTO", "NUMEXPR_")
_FIXED_ENVIRONMENT: Final = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PATH": _SANDBOX_PATH,
    "PYTHONPATH": SANDBOX_LIBRARY,
}
_PROBE_TIMEOUT_SECONDS: Final = 20.0


@dataclass(frozen=True)
class IsolationChoice:
    """The isolation actually used (``local`` or ``bwrap``) and, when ``auto`` fell back, why."""

    isolation: Literal["local", "bwrap"]
    reason: str | None = None

    def describe(self) -> str:
        """One line for a run header: ``bwrap`` or ``local (auto: bwrap unavailable: ...)``."""
        return self.isolation if self.reason is None else f"{self.isolation} ({self.reason})"


def sandbox_environment(parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed zygote (and its Policies): fixed values plus numeric-library settings."""
    source = os.environ if parent is None else parent
    kept = {k: v for k, v in source.items() if k.startswith(_KEPT_PREFIXES)}
    return {**kept, **_FIXED_ENVIRONMENT}


def _package_binds() -> list[str]:
    """Read-only binds of evoledger's Python packages (never the repository or anything else beside them)."""
    root = Path(evoledger.__file__).resolve().parent
    target = f"{SANDBOX_LIBRARY}/evoledger"
    binds = ["--ro-bind", str(root / "__init__.py"), f"{target}/__init__.py"]
    for entry in sorted(root.iterdir()):
        if entry.name != "tests" and entry.is_dir() and (entry / "__init__.py").is_file():
            binds += ["--ro-bind", str(entry), f"{target}/{entry.name}"]
    return binds


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_LEVEL:
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    for name in _ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    bound = [Path("/usr")]
    package_parent = Path(evoledger.__file__).resolve().parent.parent
    if _in_venv():  # a family venv: bound by _venv_binds, after the sandbox's own /tmp (it may live under /tmp)
        bound.append(Path(sys.prefix).resolve())
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent.parent)]
    candidates += site.getsitepackages()  # what the sandboxed interpreter finds itself (never PYTHONPATH's)
    for candidate in candidates:
        path = Path(candidate).resolve()
        if not path.is_dir() or _under(path, bound) or path == package_parent or path == Path("/"):
            continue
        args += ["--ro-bind", str(path), str(path)]
        bound.append(path)
    return args


def _in_venv() -> bool:
    return sys.prefix != sys.base_prefix


def _venv_binds() -> list[str]:
    """A family venv (:mod:`evoledger.kernel.family_env`), read-only where its interpreter names it (links kept)."""
    if not _in_venv():
        return []
    venv = Path(sys.prefix).absolute()
    return ["--ro-bind", str(venv.resolve()), str(venv)]


def _interpreter() -> str:
    """The interpreter a sandboxed zygote runs: a venv's own ``bin/python`` as is (resolving the link would start
    the base interpreter without the venv's packages), else the resolved executable."""
    if _in_venv():
        return str(Path(sys.executable).absolute())
    return str(Path(sys.executable).resolve())


def bwrap_command(bwrap: str, programs: Path, cpu: int | None, fd: int) -> list[str]:
    """The argv that starts a sandboxed zygote talking over inherited descriptor ``fd``."""
    args = [bwrap, *_NAMESPACES, "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL", "--clearenv"]
    for key, value in sorted(sandbox_environment().items()):
        args += ["--setenv", key, value]
    args += _system_binds()
    args += _package_binds()
    args += ["--ro-bind", str(programs), SANDBOX_PROGRAMS]
    size = str(SANDBOX_TMPFS_BYTES)  # a tmpfs is memory that RLIMIT_AS does not count: bounded here
    args += ["--size", size, "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    args += ["--size", size, "--tmpfs", "/dev/shm", "--chdir", "/tmp"]
    args += _venv_binds()
    entry = "evoledger.kernel.execution.sandbox_main"
    args += ["--", _interpreter(), "-m", entry, "--fd", str(fd)]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    return args


def start_sandbox(bwrap: str, programs: Path, cpu: int | None) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Start a sandboxed zygote (:mod:`~.sandbox_main`); returns its bwrap process and the worker's end of its socket.

    Light to import and call: a worker starts its first sandbox before it imports numpy and gymnasium itself.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        process = subprocess.Popen(
            bwrap_command(bwrap, programs, cpu, theirs.fileno()),
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=2,
        )
    except OSError as exc:
        ours.close()
        raise InfraError(f"cannot start the bubblewrap sandbox: {exc}") from None
    finally:
        theirs.close()
    return process, ours


@functools.cache
def probe_bwrap() -> tuple[str | None, str | None]:
    """``(path, None)`` when a bubblewrap sandbox with our namespaces runs here, else ``(None, why not)``."""
    found = shutil.which("bwrap")
    if found is None:
        return None, "bwrap is not installed"
    probe = [found, *_NAMESPACES, "--die-with-parent", "--clearenv", *_system_binds(), "--proc", "/proc"]
    probe += ["--", str(Path(sys.executable).resolve()), "-S", "-c", "import os; assert os.getpid() < 5"]  # -S: fast
    try:
        done = subprocess.run(
            probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"the bwrap probe failed: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"the bwrap probe failed: {detail[-1] if detail else f'exit status {done.returncode}'}"
    return found, None


def resolve_isolation(requested: str, *, option: str = "--isolation", hint: str = INSTALL_HINT) -> IsolationChoice:
    """Turn ``local`` / ``bwrap`` / ``auto`` into the backend to use; ConfigError if ``bwrap`` cannot work.

    ``option`` and ``hint`` name the setting in messages (the Agent's sandbox resolves through here too).
    """
    if requested not in ISOLATIONS:
        raise ConfigError(f"{option} must be one of {', '.join(ISOLATIONS)}, got {requested!r}")
    if requested == "local":
        return IsolationChoice("local")
    path, why = probe_bwrap()
    if path is not None:
        return IsolationChoice("bwrap")
    if requested == "bwrap":
        raise ConfigError(f"{option} bwrap was requested but cannot be used: {why}; {hint}")
    return IsolationChoice("local", f"auto: bwrap unavailable: {why}")


def bwrap_path() -> str:
    """The probed bwrap binary (ConfigError if there is none that works)."""
    path, why = probe_bwrap()
    if path is None:
        raise ConfigError(f"bubblewrap cannot be used: {why}; {INSTALL_HINT}")
    return path
