"""Built-in offline agents (no network, no API key), each run as its own process like a real coding agent.

``python -m evoledger.kernel.agents.builtin.baseline`` and ``python -m evoledger.kernel.agents.builtin.hill_climb``
talk to the Host only through the ``evoledger-session`` executable. The agent modules are not imported here, so
running them with ``-m`` does not import them twice.
"""

from evoledger.kernel.agents.builtin.session_calls import (
    SESSION_EXECUTABLE,
    FinishPolicy,
    SessionCaller,
    SessionLimits,
    SessionReply,
    format_range,
    read_feedback,
    session_argv,
)

__all__ = [
    "BASELINE_MODULE",
    "HILL_CLIMB_MODULE",
    "SESSION_EXECUTABLE",
    "FinishPolicy",
    "SessionCaller",
    "SessionLimits",
    "SessionReply",
    "format_range",
    "read_feedback",
    "session_argv",
]

BASELINE_MODULE = "evoledger.kernel.agents.builtin.baseline"
HILL_CLIMB_MODULE = "evoledger.kernel.agents.builtin.hill_climb"
