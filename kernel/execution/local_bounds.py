"""Resource figures read from a record, bounded by this machine before anything is started with them.

A record written elsewhere (or crafted) may ask for 256 workers or a Policy with no memory cap. ``resume`` and
``replay --execute`` pass every such figure through these functions: worker counts never exceed the CPUs this
process may use, and a Policy's address-space cap never exceeds this machine's physical memory. Neither changes
what an Episode produces (results are identical for any worker count; a Policy that fits in memory here fits
under the cap).
"""

from __future__ import annotations

import os
from typing import Final

from evoledger.kernel.execution.tasks import PolicyLimits

__all__ = ["MAX_CPU_SECONDS", "bounded_limits", "bounded_workers", "local_cpu_count", "local_memory_bytes"]


def local_cpu_count() -> int:
    """The CPUs this process may run on (affinity), never more than ``os.cpu_count()``."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(usable, os.cpu_count() or usable))


def local_memory_bytes() -> int | None:
    """This machine's physical memory in bytes (None when the system does not say)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def bounded_workers(recorded: int, requested: int | None = None) -> int:
    """The worker count to start: what the user asked for (else the record's), at most the local CPU count."""
    wanted = requested if requested is not None else recorded
    return max(1, min(wanted, local_cpu_count()))


MAX_CPU_SECONDS: Final = 8 * 86_400
"""The largest CPU-time limit (RLIMIT_CPU) a recorded Policy limit may ask for: above the schema's wall limits."""


def bounded_limits(limits: PolicyLimits) -> PolicyLimits:
    """``limits`` with the Policy's memory cap at most this machine's physical memory and its CPU-time limit at
    most :data:`MAX_CPU_SECONDS` (wall-clock limits are bounded by the schema already)."""
    update: dict[str, int] = {}
    physical = local_memory_bytes()
    if physical is not None and (limits.memory_bytes is None or limits.memory_bytes > physical):
        update["memory_bytes"] = max(physical, 64 * 1024**2)
    if limits.cpu_seconds is not None and limits.cpu_seconds > MAX_CPU_SECONDS:
        update["cpu_seconds"] = MAX_CPU_SECONDS
    return limits.model_copy(update=update) if update else limits
