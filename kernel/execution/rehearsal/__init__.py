"""A Program the zygote loads (twice, then forgets) before it forks any Policy child.

Python specializes bytecode in place as it runs: code a Policy child runs for the first time is rewritten there,
in every child. The zygote therefore loads ``policy.py`` from this folder exactly as a child will load its Episode's
own (:mod:`evoledger.kernel.execution.policy_runtime`), so that those paths are already specialized when it forks.
It is part of the package, so no Policy can change it (a sandbox sees it read-only).
"""

__all__: list[str] = []
