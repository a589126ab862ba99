"""The isolation for Programs read from a record (``replay --execute``, ``resume``): a sandbox unless waived.

A run directory may come from someone else, so the Programs it holds are untrusted code. Without an explicit choice
they run only under bubblewrap, and a machine without a working bubblewrap refuses instead of quietly running them
as plain processes. ``--no-isolation`` (or ``--isolation local``) is the user's informed opt-out; ``--isolation auto``
keeps the fall-back behaviour of ``run``/``evaluate`` and says so. The recorded isolation is never taken as given.
"""

from __future__ import annotations

from typing import Final

from evoledger.kernel.execution import IsolationChoice, resolve_isolation
from evoledger.ledger.errors import ConfigError

__all__ = ["NO_ISOLATION_HELP", "RECORDED_ISOLATION_HELP", "recorded_code_isolation"]

RECORDED_ISOLATION_HELP: Final = (
    "How the recorded Programs are isolated. Default: bwrap, and a refusal where bubblewrap cannot work (the record "
    "may come from someone else). local or --no-isolation: plain processes; auto: bwrap, else local. Never taken "
    "from the record."
)
NO_ISOLATION_HELP: Final = "Run the recorded Programs as plain processes, unsandboxed (the same as --isolation local)."


def recorded_code_isolation(requested: str | None, no_isolation: bool, *, command: str) -> IsolationChoice:
    """The isolation for ``command`` to run recorded Programs under: bwrap unless the user chose otherwise.

    Raises :class:`ConfigError` (exit 2) when no choice was made and bubblewrap cannot work, or when
    ``--no-isolation`` contradicts an explicit ``--isolation``.
    """
    if no_isolation:
        if requested not in (None, "local"):
            raise ConfigError(f"--no-isolation contradicts --isolation {requested}; give one of them")
        return IsolationChoice("local", "--no-isolation: the recorded Programs run unsandboxed")
    if requested is not None:
        chosen = resolve_isolation(requested)
        if chosen.isolation == "local" and chosen.reason is None:
            return IsolationChoice("local", "--isolation local: the recorded Programs run unsandboxed")
        return chosen
    chosen = resolve_isolation("auto")
    if chosen.isolation != "bwrap":
        raise ConfigError(
            f"{command} runs the Programs recorded in the run directory, which may come from someone else, so it "
            f"runs them only under bubblewrap, and bubblewrap cannot be used here ({chosen.reason}). Install it "
            "(apt-get install bubblewrap), or pass --no-isolation to run them as plain processes if you trust the "
            "record"
        )
    return chosen
