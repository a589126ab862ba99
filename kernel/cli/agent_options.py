"""``--agent-option key=value``: the coding-agent CLI's options, typed by ``AgentConfig`` (repeatable).

The keys are ``model``, ``effort``, ``executable``, ``extra_args`` (shell words, appended to ``--agent-arg``),
``view_image`` (true/false) and ``home``. A wrong key or value is one line naming it, the closest key and every valid
key; whether the chosen Agent takes the option is checked when it is built (``make_agent``).
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeVar

import click
from evoledger.ledger.errors import ConfigError

__all__ = ["AGENT_OPTION_FIELDS", "AGENT_OPTION_KEYS", "agent_option_flag", "apply_agent_options"]

_F = TypeVar("_F", bound=Callable[..., object])

AGENT_OPTION_KEYS: Final = ("effort", "executable", "extra_args", "home", "model", "view_image")
"""Every key ``--agent-option`` accepts."""

AGENT_OPTION_FIELDS: Final = ("agent.effort", "agent.executable", "agent.view_image", "agent.home")
"""The ``AgentConfig`` fields set only through ``--agent-option`` (no flag of their own)."""

_TRUE: Final = {"true", "1", "yes", "on"}
_FALSE: Final = {"false", "0", "no", "off"}


def agent_option_flag(function: _F) -> _F:
    """The repeatable ``--agent-option KEY=VALUE`` option (the command receives ``agent_options``)."""
    return click.option(
        "--agent-option",
        "agent_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="A coding-agent CLI option (repeatable): model, effort, executable, extra_args (shell words), "
        "view_image (true/false, Codex), home (its configuration folder; default: a fresh one per Run).",
    )(function)


def _valid() -> str:
    return ", ".join(AGENT_OPTION_KEYS)


def _one(pair: str) -> tuple[str, str]:
    key, sep, value = pair.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--agent-option {pair!r} is not KEY=VALUE; valid keys: {_valid()}")
    if key not in AGENT_OPTION_KEYS:
        close = difflib.get_close_matches(key, AGENT_OPTION_KEYS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"--agent-option {pair!r}: unknown key {key!r}{hint}; valid keys: {_valid()}")
    return key, value


def apply_agent_options(agent: Mapping[str, Any], pairs: Iterable[str]) -> dict[str, Any]:
    """``agent`` (the ``AgentConfig`` fields as a mapping) with each ``KEY=VALUE`` of ``pairs`` applied, later wins."""
    updated = dict(agent)
    for pair in pairs:
        key, value = _one(pair)
        if key == "view_image":
            word = value.strip().lower()
            if word not in _TRUE | _FALSE:
                raise ConfigError(f"--agent-option {pair!r}: view_image takes true or false, got {value!r}")
            updated["view_image"] = word in _TRUE
        elif key == "extra_args":
            try:
                words = shlex.split(value)
            except ValueError as exc:
                raise ConfigError(
                    f"--agent-option {pair!r}: cannot split it into words ({exc}); check its quoting"
                ) from None
            updated["args"] = (*updated.get("args", ()), *words)
        elif not value.strip():
            raise ConfigError(f"--agent-option {pair!r}: {key} needs a value, got an empty one")
        else:
            updated[key] = value
    return updated
