"""evoledger: an event-sourced harness for measuring how coding agents evolve executable policies.

The repository root is this package: ``evoledger.ledger`` is the record, ``evoledger.projections``
the pure folds over it, ``evoledger.kernel`` the behaviour, ``evoledger.benchmarks`` the concrete
Benchmarks and ``evoledger.exporters`` the datasets. See DESIGN.md in the shared folder.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
