"""Policy ABIs other than the kernel's own: ``--policy-abi evopolicygym`` runs EvoPolicyGym 0.3 Programs unchanged.

The default ABI (``evoledger``) is :mod:`~evoledger.kernel.execution.policy_runtime` itself and costs nothing here
(this package imports only the standard library until a worker or Policy child uses :mod:`~.plan` or :mod:`~.child`).
With ``evopolicygym`` the worker makes a :class:`~.child.ChildAbi` for the Benchmark (:func:`~.plan.child_abi_for`,
refusing a Benchmark without an EvoPolicyGym encoding: :func:`check_policy_abi`); each Policy child then finds
``evopolicygym.policy`` on its ``sys.path`` (``site/``, never installed), receives that module's ``PolicyContext``,
and its ``act`` is wrapped in the observation and action conversions (:mod:`~.child`). The Environment, the worker,
the trajectories and the ledger see the same values as with the default ABI.
"""

from evoledger.kernel.execution.abi.names import (
    DEFAULT_POLICY_ABI,
    POLICY_ABIS,
    PolicyAbi,
    check_abi_program,
    check_policy_abi,
    evopolicygym_names,
    policy_abis_of,
)

__all__ = [
    "DEFAULT_POLICY_ABI",
    "POLICY_ABIS",
    "PolicyAbi",
    "check_abi_program",
    "check_policy_abi",
    "evopolicygym_names",
    "policy_abis_of",
]
