"""Agents: the coding agents (or built-in offline agents) that evolve a Policy Program in a Run's workspace.

An Agent is a separate process. :mod:`~evoledger.kernel.agents.adapters` say how to launch each CLI
non-interactively, :class:`AgentSupervisor` runs it (minimal environment, own process group, capped output,
watchdog deadline, stop of every process carrying its marker), :class:`AgentSandbox` confines it with bubblewrap
(``--agent-isolation bwrap``), :func:`render_task_text` writes what it is told, :func:`make_agent` finds adapters
by name, and :func:`stop_stale_agent_group` ends an Agent a dead Host left running (only if it is still that Agent).
"""

from evoledger.kernel.agents.adapters import (
    AGENT_SEED_ENV,
    COMMAND_PREFIX,
    NETWORK_ENV_VARS,
    TASK_FILE_ENV,
    BuiltinAgent,
    ClaudeCodeAgent,
    CodexAgent,
    CommandAgent,
    KimiCodeAgent,
    QoderAgent,
)
from evoledger.kernel.agents.base import AgentCommand, AgentTask, CodingAgent
from evoledger.kernel.agents.log_capture import AGENT_LOG_HEAD_BYTES, AGENT_LOG_TAIL_BYTES, CappedLog
from evoledger.kernel.agents.marked import end_marked_processes, marked_processes
from evoledger.kernel.agents.registry import AGENTS, agent_names, make_agent
from evoledger.kernel.agents.sandbox import AGENT_ISOLATIONS, AgentIsolation, AgentSandbox, resolve_agent_isolation
from evoledger.kernel.agents.stale import StaleAgentOutcome, stop_stale_agent_group
from evoledger.kernel.agents.supervisor import (
    BASE_ENV_VARS,
    HOST_ENV_PREFIX,
    AgentExit,
    AgentSupervisor,
    build_agent_env,
)
from evoledger.kernel.agents.task_text import FINISH_POLICIES, FinishBudgetPolicy, TaskFacts, render_task_text

__all__ = [
    "AGENTS",
    "AGENT_ISOLATIONS",
    "AGENT_LOG_HEAD_BYTES",
    "AGENT_LOG_TAIL_BYTES",
    "AGENT_SEED_ENV",
    "BASE_ENV_VARS",
    "COMMAND_PREFIX",
    "FINISH_POLICIES",
    "HOST_ENV_PREFIX",
    "NETWORK_ENV_VARS",
    "TASK_FILE_ENV",
    "AgentCommand",
    "AgentExit",
    "AgentIsolation",
    "AgentSandbox",
    "AgentSupervisor",
    "AgentTask",
    "BuiltinAgent",
    "CappedLog",
    "ClaudeCodeAgent",
    "CodexAgent",
    "CodingAgent",
    "CommandAgent",
    "FinishBudgetPolicy",
    "KimiCodeAgent",
    "QoderAgent",
    "StaleAgentOutcome",
    "TaskFacts",
    "agent_names",
    "build_agent_env",
    "end_marked_processes",
    "make_agent",
    "marked_processes",
    "render_task_text",
    "resolve_agent_isolation",
    "stop_stale_agent_group",
]
