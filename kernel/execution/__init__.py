"""Policy execution: a fresh Environment and a fresh Policy process per Episode, cheaply.

The coordinator (the caller) hands :class:`EpisodeTask` objects to an :class:`Executor` and receives
:class:`EpisodeOutcome` objects in task order. :class:`LocalExecutor` runs them in pre-warmed worker
processes; each worker's zygote forks one Policy child per Episode (never holding a Host seed), the
worker drives the Environment, and the two exchange observations and actions over a framed socket
(raw numpy bytes, never pickle). :class:`RayExecutor` runs them on a Ray cluster instead (``--backend ray``;
:func:`open_executor` builds either). See ``docs/architecture.md`` ("Execution").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.kernel.execution.actions import conform_action
    from evoledger.kernel.execution.backend import BACKENDS, Backend, ExecutionBackend, open_executor
    from evoledger.kernel.execution.context import POLICY_CONTEXT_FIELDS, PolicyContext
    from evoledger.kernel.execution.executor import Executor, LocalExecutor
    from evoledger.kernel.execution.isolation import ISOLATIONS, Isolation, IsolationChoice, resolve_isolation
    from evoledger.kernel.execution.local_bounds import bounded_limits, bounded_workers, local_cpu_count
    from evoledger.kernel.execution.ray_executor import RayExecutor
    from evoledger.kernel.execution.tasks import EpisodeOutcome, EpisodeTask, PolicyLimits
    from evoledger.kernel.execution.values import decode_wire, encode_wire, to_json_value

__all__ = [
    "BACKENDS",
    "ISOLATIONS",
    "POLICY_CONTEXT_FIELDS",
    "Backend",
    "EpisodeOutcome",
    "EpisodeTask",
    "ExecutionBackend",
    "Executor",
    "Isolation",
    "IsolationChoice",
    "LocalExecutor",
    "PolicyContext",
    "PolicyLimits",
    "RayExecutor",
    "bounded_limits",
    "bounded_workers",
    "conform_action",
    "decode_wire",
    "encode_wire",
    "local_cpu_count",
    "open_executor",
    "resolve_isolation",
    "to_json_value",
]

_LAZY: Final = {
    "conform_action": "evoledger.kernel.execution.actions",
    "BACKENDS": "evoledger.kernel.execution.backend",
    "Backend": "evoledger.kernel.execution.backend",
    "ExecutionBackend": "evoledger.kernel.execution.backend",
    "open_executor": "evoledger.kernel.execution.backend",
    "POLICY_CONTEXT_FIELDS": "evoledger.kernel.execution.context",
    "PolicyContext": "evoledger.kernel.execution.context",
    "Executor": "evoledger.kernel.execution.executor",
    "LocalExecutor": "evoledger.kernel.execution.executor",
    "ISOLATIONS": "evoledger.kernel.execution.isolation",
    "Isolation": "evoledger.kernel.execution.isolation",
    "IsolationChoice": "evoledger.kernel.execution.isolation",
    "resolve_isolation": "evoledger.kernel.execution.isolation",
    "bounded_limits": "evoledger.kernel.execution.local_bounds",
    "bounded_workers": "evoledger.kernel.execution.local_bounds",
    "local_cpu_count": "evoledger.kernel.execution.local_bounds",
    "RayExecutor": "evoledger.kernel.execution.ray_executor",
    "EpisodeOutcome": "evoledger.kernel.execution.tasks",
    "EpisodeTask": "evoledger.kernel.execution.tasks",
    "PolicyLimits": "evoledger.kernel.execution.tasks",
    "decode_wire": "evoledger.kernel.execution.values",
    "encode_wire": "evoledger.kernel.execution.values",
    "to_json_value": "evoledger.kernel.execution.values",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
