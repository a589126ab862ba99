"""The socket file of a live Session: path checks, binding with mode 0600, stale-socket recovery, removal."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import ConfigError

__all__ = ["MAX_SOCKET_PATH_BYTES", "bind_socket", "remove_socket_file"]

MAX_SOCKET_PATH_BYTES: Final = 107
"""Longest Unix socket path Linux accepts (``sun_path`` is 108 bytes including the terminator)."""


def _check_path(path: Path) -> None:
    encoded = os.fsencode(str(path))
    if len(encoded) > MAX_SOCKET_PATH_BYTES:
        raise ConfigError(
            f"socket path {str(path)!r} is {len(encoded)} bytes; Unix sockets allow at most "
            f"{MAX_SOCKET_PATH_BYTES} bytes on Linux. Use a shorter run directory (e.g. under /tmp)"
        )
    if not path.parent.is_dir():
        raise ConfigError(f"socket directory {str(path.parent)!r} does not exist; create it before starting the Host")


def bind_socket(path: Path) -> tuple[socket.socket, tuple[int, int]]:
    """Listen on ``path`` (mode 0600); returns the socket and the file's (device, inode)."""
    _check_path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISSOCK(info.st_mode):
            raise ConfigError(f"{str(path)!r} exists and is not a socket; remove it or choose another run directory")
        if _is_live(path):
            raise ConfigError(
                f"{str(path)!r} is a live socket: another Host is serving this Run. Stop it, or use another run "
                "directory"
            )
        os.unlink(path)  # a stale socket left by a crashed Host
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        os.chmod(path, 0o600)  # before listen(): nobody can connect in between
        listener.listen(128)
        listener.setblocking(False)
        bound = os.stat(path)
    except OSError as exc:
        listener.close()
        raise ConfigError(f"cannot listen on {str(path)!r}: {exc.strerror or exc}; check the run directory") from exc
    return listener, (bound.st_dev, bound.st_ino)


def _is_live(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def remove_socket_file(path: Path, inode: tuple[int, int]) -> None:
    """Remove ``path`` if it is still the socket file we bound (never a successor's)."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if (info.st_dev, info.st_ino) == inode:
        with contextlib.suppress(OSError):
            os.unlink(path)
