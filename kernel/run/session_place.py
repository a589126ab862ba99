"""Where a live Session is reached from: the socket's path and the Agent's own ``evoledger-session`` launcher.

Two things the Agent needs do not fit the run directory in every case, so each live Session gets a short private
folder (mode 0700, created by :func:`tempfile.mkdtemp` under ``$XDG_RUNTIME_DIR`` when that is a short folder of
ours, else under ``/tmp``), removed when the Session ends:

- **The socket.** Linux limits a Unix socket path to 107 bytes. The socket is ``<run>/control/session.sock`` when
  that path fits, else ``session.sock`` in the private folder, so a long run directory works. The Agent learns the
  path from ``$EVOLEDGER_SESSION_SOCKET`` either way.
- **The session client.** ``bin/evoledger-session`` in the private folder is a launcher bound to the Host's own
  interpreter (:data:`sys.executable`) and to the folder the Host imports ``evoledger`` from, and that folder comes
  first on the Agent's ``PATH``. The Agent therefore runs the Host's session client whether or not the user
  activated the virtual environment, and never a different ``evoledger-session`` found later on ``PATH``. The
  launcher runs Python with ``-P``, so nothing in the Agent's workspace can shadow the client's modules.

The sandboxed Agent sees the private folder read-only at the same path
(:attr:`~evoledger.kernel.agents.sandbox.AgentSandbox.outside_readable`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.session import MAX_SOCKET_PATH_BYTES
from evoledger.ledger.errors import ConfigError

__all__ = ["SESSION_COMMAND", "SessionPlace", "launcher_text", "session_place"]

SESSION_COMMAND: Final = "evoledger-session"
"""The command the task text tells the Agent to run."""

_SOCKET_NAME: Final = "session.sock"
_PREFIX: Final = "evoledger-"
_LONGEST_PRIVATE_BASE: Final = MAX_SOCKET_PATH_BYTES - len(f"/{_PREFIX}xxxxxxxx/{_SOCKET_NAME}")


@dataclass(frozen=True, slots=True)
class SessionPlace:
    """The paths of one live Session: the ``private`` folder, the ``socket`` and the launcher's ``bin_dir``."""

    private: Path
    socket: Path
    bin_dir: Path


def _import_root() -> Path | None:
    """The ``sys.path`` folder the Host imports ``evoledger`` from, when it is a plain folder named ``evoledger``
    (``None`` for an install whose own import hook finds it, e.g. an editable install mapped onto the repository)."""
    import evoledger

    package = Path(os.path.abspath(Path(evoledger.__file__).parent))
    return package.parent if package.name == "evoledger" else None


def launcher_text(python: str, import_root: Path | None) -> str:
    """The ``evoledger-session`` launcher: a POSIX shell script that runs the session client with ``python``."""
    prelude = "" if import_root is None else f"sys.path.insert(0, {str(import_root)!r}); "
    code = f"import sys; {prelude}from evoledger.kernel.session.client import run; sys.exit(run())"
    return f'#!/bin/sh\nexec {shlex.quote(python)} -P -c {shlex.quote(code)} "$@"\n'


def _private_base(environ: Mapping[str, str]) -> Path:
    """``$XDG_RUNTIME_DIR`` when it is a short absolute folder owned by this user with mode 0700, else ``/tmp``."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and len(os.fsencode(runtime)) <= _LONGEST_PRIVATE_BASE:
        try:
            info = os.stat(runtime)
        except OSError:
            info = None
        if info is not None and info.st_uid == os.getuid() and info.st_mode & 0o777 == 0o700:
            return Path(runtime)
    return Path("/tmp")


@contextmanager
def session_place(
    layout: RunLayout, *, python: str | None = None, environ: Mapping[str, str] | None = None
) -> Iterator[SessionPlace]:
    """Create the private folder of one Session (socket path and launcher) and remove it when the block ends."""
    interpreter = python or sys.executable
    if not interpreter:
        raise ConfigError(
            "the Host's Python interpreter is unknown (sys.executable is empty); start evoledger with python"
        )
    base = _private_base(os.environ if environ is None else environ)
    try:
        private = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=base))  # mode 0700, a fresh name
    except OSError as exc:
        raise ConfigError(f"cannot create the Session's private folder under {str(base)!r}: {exc}") from exc
    try:
        bin_dir = private / "bin"
        bin_dir.mkdir(mode=0o700)
        launcher = bin_dir / SESSION_COMMAND
        launcher.write_text(launcher_text(interpreter, _import_root()), encoding="utf-8")
        launcher.chmod(0o500)
        fits = len(os.fsencode(str(layout.socket))) <= MAX_SOCKET_PATH_BYTES
        yield SessionPlace(private=private, socket=layout.socket if fits else private / _SOCKET_NAME, bin_dir=bin_dir)
    finally:
        shutil.rmtree(private, ignore_errors=True)
