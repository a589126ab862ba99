"""A Program that every Policy child loads once before its start message, then forgets.

Loading a Program the first time in a freshly forked child copies every page the import machinery writes to
(copy-on-write). :func:`evoledger.kernel.execution.policy_runtime.become_policy_process` loads ``policy.py`` from
this folder exactly as it will load the Episode's own, before the Episode's clock runs, so that the Episode's load
finds that memory already copied. It is part of the package, so no Policy can change it (a sandbox sees it
read-only).
"""

__all__: list[str] = []
