"""Processes seen through /proc, for tests that check what a command or an executor leaves running."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

__all__ = ["alive", "cmdline", "descendants", "parents", "processes_naming", "wait_until"]


def parents() -> dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            table[int(entry)] = int(fields[1])
    return table


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, grandchildren, ...)."""
    table = parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in table.items() if parent in frontier} - found
        found |= frontier
    return found


def cmdline(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces ("" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def processes_naming(text: str) -> list[int]:
    """Every process whose command line holds ``text`` (a path, say)."""
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and text in cmdline(int(e))]


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still alive (not zombies)."""
    table = parents()
    return {pid for pid in pids if pid in table}


def wait_until(condition: Callable[[], bool], seconds: float, *, every: float = 0.05) -> bool:
    """Whether ``condition()`` became true within ``seconds`` (polled every ``every`` seconds)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True
