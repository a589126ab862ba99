"""Processes seen through /proc, for tests that check what a command or an executor leaves running."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

__all__ = ["alive", "descendants", "parents", "wait_until"]


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
