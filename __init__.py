"""evoledger: an event-sourced harness for measuring how coding agents evolve executable policies.

The names in ``__all__`` are the public face: run a Run (:func:`run`, :func:`resume`), evaluate a Program
(:func:`evaluate`), audit a recorded Run (:func:`replay`), export Runs as a dataset (:func:`export`), open a record
(:class:`Ledger`), and the Benchmark authoring API (:class:`Benchmark`, :class:`Environment`, :class:`Feedback`,
:func:`check_benchmark`, ...). Everything else is implementation; ``docs/architecture.md`` says which packages are
public and what may change without notice.

Importing this package is cheap (standard library only): each name is imported on first use (PEP 562), so the
Session client, which imports through this package, never pays for pydantic, gymnasium or numpy.

The repository root is this package: ``evoledger.ledger`` is the record, ``evoledger.projections`` the pure folds
over it, ``evoledger.kernel`` the behaviour, ``evoledger.benchmarks`` the concrete Benchmarks and
``evoledger.exporters`` the datasets (see ``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evoledger.kernel import authoring as _authoring  # a lazy package: imports none of its modules

__version__ = "0.1.0"

if TYPE_CHECKING:
    from evoledger.exporters.dataset import export_dataset as export
    from evoledger.kernel.authoring import *  # noqa: F403 (exactly its __all__)
    from evoledger.kernel.evaluation import EvaluationConfig, evaluate
    from evoledger.kernel.replay import replay
    from evoledger.kernel.run import AgentConfig, RunConfig, run
    from evoledger.kernel.run.resume import resume
    from evoledger.ledger import Ledger

_LAZY: dict[str, tuple[str, str]] = {
    "run": ("evoledger.kernel.run", "run"),
    "resume": ("evoledger.kernel.run.resume", "resume"),
    "RunConfig": ("evoledger.kernel.run", "RunConfig"),
    "AgentConfig": ("evoledger.kernel.run", "AgentConfig"),
    "evaluate": ("evoledger.kernel.evaluation", "evaluate"),
    "EvaluationConfig": ("evoledger.kernel.evaluation", "EvaluationConfig"),
    "replay": ("evoledger.kernel.replay", "replay"),
    "export": ("evoledger.exporters", "export_dataset"),
    "Ledger": ("evoledger.ledger", "Ledger"),
    **{name: ("evoledger.kernel.authoring", name) for name in _authoring.__all__},
}
"""Public name -> (module, attribute) it is imported from on first use."""

__all__ = [
    "AgentConfig",
    "EvaluationConfig",
    "Ledger",
    "RunConfig",
    "__version__",
    "evaluate",
    "export",
    "replay",
    "resume",
    "run",
]
__all__ += _authoring.__all__


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562) and keep it, so later lookups are plain attribute reads."""
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'evoledger' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
