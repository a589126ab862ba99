"""Family environments: a venv per Benchmark family whose dependencies cannot share the main environment.

``evoledger env install FAMILY`` makes one (:mod:`~.install`) under :func:`~.place.environments_root`; its marker
(:mod:`~.marker`) says whether it is still current; :func:`~.families.worker_python` picks the interpreter a
Benchmark's workers start from. Only workers run there: the Host (CLI, ledger, Agent, Feedback, scoring) stays in the
main environment. Names load on first use; all but :mod:`~.families` (the registry) are standard library only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.kernel.family_env.families import (
        family_benchmarks,
        family_extras,
        host_environment_problem,
        own_environment_extra,
        own_environment_families,
        worker_python,
    )
    from evoledger.kernel.family_env.install import (
        InstallResult,
        install_environment,
        remove_environment,
        update_benchmarks,
    )
    from evoledger.kernel.family_env.marker import (
        MARKER_NAME,
        WORKER_REQUIREMENTS,
        EnvironmentState,
        EnvironmentStatus,
        Marker,
        family_status,
        install_requirements,
        read_marker,
        requirements_digest,
    )
    from evoledger.kernel.family_env.place import (
        ENVS_VARIABLE,
        environments_root,
        evoledger_source,
        family_folder,
        folder_bytes,
        site_packages,
        venv_python,
    )

__all__ = [
    "ENVS_VARIABLE",
    "MARKER_NAME",
    "WORKER_REQUIREMENTS",
    "EnvironmentState",
    "EnvironmentStatus",
    "InstallResult",
    "Marker",
    "environments_root",
    "evoledger_source",
    "family_benchmarks",
    "family_extras",
    "family_folder",
    "family_status",
    "folder_bytes",
    "host_environment_problem",
    "install_environment",
    "install_requirements",
    "own_environment_extra",
    "own_environment_families",
    "read_marker",
    "remove_environment",
    "requirements_digest",
    "site_packages",
    "update_benchmarks",
    "venv_python",
    "worker_python",
]

_LAZY: Final = {
    "family_benchmarks": "evoledger.kernel.family_env.families",
    "family_extras": "evoledger.kernel.family_env.families",
    "host_environment_problem": "evoledger.kernel.family_env.families",
    "own_environment_extra": "evoledger.kernel.family_env.families",
    "own_environment_families": "evoledger.kernel.family_env.families",
    "worker_python": "evoledger.kernel.family_env.families",
    "InstallResult": "evoledger.kernel.family_env.install",
    "install_environment": "evoledger.kernel.family_env.install",
    "remove_environment": "evoledger.kernel.family_env.install",
    "update_benchmarks": "evoledger.kernel.family_env.install",
    "MARKER_NAME": "evoledger.kernel.family_env.marker",
    "WORKER_REQUIREMENTS": "evoledger.kernel.family_env.marker",
    "EnvironmentState": "evoledger.kernel.family_env.marker",
    "EnvironmentStatus": "evoledger.kernel.family_env.marker",
    "Marker": "evoledger.kernel.family_env.marker",
    "family_status": "evoledger.kernel.family_env.marker",
    "install_requirements": "evoledger.kernel.family_env.marker",
    "read_marker": "evoledger.kernel.family_env.marker",
    "requirements_digest": "evoledger.kernel.family_env.marker",
    "ENVS_VARIABLE": "evoledger.kernel.family_env.place",
    "environments_root": "evoledger.kernel.family_env.place",
    "evoledger_source": "evoledger.kernel.family_env.place",
    "family_folder": "evoledger.kernel.family_env.place",
    "folder_bytes": "evoledger.kernel.family_env.place",
    "site_packages": "evoledger.kernel.family_env.place",
    "venv_python": "evoledger.kernel.family_env.place",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
