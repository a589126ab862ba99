"""How the built-in agents talk to the Host: by running the ``evoledger-session`` executable, like any Agent.

The built-in agents never import the Host or the session transport. They run the command line an external
coding agent would run (``evoledger-session status|submit|finish``) and read ``feedback/`` in the workspace.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from evoledger.ledger.errors import InfraError, InputError

__all__ = [
    "SESSION_EXECUTABLE",
    "FinishPolicy",
    "SessionCaller",
    "SessionLimits",
    "SessionReply",
    "format_range",
    "log",
    "read_feedback",
    "session_argv",
]

SESSION_EXECUTABLE: Final = "evoledger-session"

FinishPolicy = Literal["allow_early", "require_budget_exhaustion"]

Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def log(message: str) -> None:
    """One line of the agent's log on stdout (the Host stores it as an Object)."""
    print(message, flush=True)


def session_argv() -> list[str]:
    """How to run the session client: ``evoledger-session`` on PATH, else ``python -m`` its module."""
    found = shutil.which(SESSION_EXECUTABLE)
    if found:
        return [found]
    return [sys.executable, "-m", "evoledger.kernel.session.client"]


def format_range(start: int, stop: int) -> str:
    """The selector of the half-open index range ``[start, stop)``."""
    if not 0 <= start < stop:
        raise InputError(f"an Episode range needs 0 <= start < stop, got {start}:{stop}")
    return f"{start}:{stop}"


@dataclass(frozen=True, slots=True)
class SessionReply:
    """One session command's outcome: exit 0 with JSON ``data``, or a Host rejection (exit 1) with ``error``."""

    exit_code: int
    data: Mapping[str, Any]
    error: Mapping[str, Any]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def retryable(self) -> bool:
        return bool(self.error.get("retryable", False))

    def describe(self) -> str:
        if self.ok:
            return "ok"
        return f"{self.error.get('code', 'unknown')}: {self.error.get('message', '')}"


def _find(data: Mapping[str, Any], names: Sequence[str]) -> Any:
    """The first of ``names`` present at the top level of ``data`` or one level down."""
    for name in names:
        if name in data:
            return data[name]
    for value in data.values():
        if isinstance(value, Mapping):
            for name in names:
                if name in value:
                    return value[name]
    return None


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise InfraError(f"the session status field {what!r} should be an integer, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """What ``evoledger-session status`` says the Agent may still do."""

    budget_left: int
    submissions_left: int
    pool_size: int
    max_episodes_per_submission: int
    max_candidates: int
    finish_policy: FinishPolicy
    maximize: bool
    finished: bool = False

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> SessionLimits:
        def required(*names: str) -> int:
            value = _find(status, names)
            if value is None:
                raise InfraError(f"the session status lacks {names[0]!r}: {json.dumps(dict(status))[:300]}")
            return _as_int(value, names[0])

        def optional(default: int, *names: str) -> int:
            value = _find(status, names)
            return default if value is None else _as_int(value, names[0])

        budget_left = required("budget_left", "episode_budget_left", "budget_remaining")
        pool_size = required("pool_size", "episode_pool_size")
        raw_policy = _find(status, ("finish_budget_policy", "finish_policy")) or "allow_early"
        if raw_policy == "allow_early":
            policy: FinishPolicy = "allow_early"
        elif raw_policy == "require_budget_exhaustion":
            policy = "require_budget_exhaustion"
        else:
            raise InfraError(f"unknown finish budget policy {raw_policy!r} in the session status")
        direction = _find(status, ("score_direction",)) or "maximize"
        return cls(
            budget_left=budget_left,
            submissions_left=optional(budget_left, "submissions_left", "submissions_remaining"),
            pool_size=pool_size,
            max_episodes_per_submission=optional(pool_size, "max_episodes_per_submission"),
            max_candidates=max(1, optional(1, "max_candidates")),
            finish_policy=policy,
            maximize=direction != "minimize",
            finished=bool(_find(status, ("finished",))),
        )

    def after_submission(self, reply: Mapping[str, Any]) -> SessionLimits | None:
        """The limits after an accepted submission whose reply reports what is left; ``None`` if it does not."""
        budget, submissions = reply.get("budget_left"), reply.get("submissions_left")
        if not (isinstance(budget, int) and isinstance(submissions, int)):
            return None
        return dataclasses.replace(self, budget_left=budget, submissions_left=submissions)

    @property
    def per_submission_cap(self) -> int:
        """The most Episodes one submission can select right now."""
        return max(0, min(self.max_episodes_per_submission, self.pool_size, self.budget_left))

    def batch_size(self, preferred: int) -> int:
        """Episodes for the next submission: ``preferred``, raised so the whole budget can still be spent."""
        cap = self.per_submission_cap
        if cap == 0 or self.submissions_left <= 0:
            return 0
        spread = -(-self.budget_left // self.submissions_left)  # ceil: spend everything over the submissions left
        needed = self.budget_left - (self.submissions_left - 1) * cap  # so exhaustion stays possible
        return max(1, min(cap, max(preferred, spread, needed)))


class SessionCaller:
    """Runs ``evoledger-session`` subcommands in the workspace and parses their JSON replies."""

    def __init__(self, workspace: Path, *, argv: Sequence[str] | None = None, runner: Runner = subprocess.run) -> None:
        self.workspace = workspace
        self._argv = list(argv) if argv is not None else session_argv()
        self._runner = runner

    def call(self, *args: str) -> SessionReply:
        """Run one subcommand. Exit 0 and 1 give a reply; anything else raises (the agent's call was wrong)."""
        argv = [*self._argv, *args]
        try:
            done = self._runner(argv, cwd=self.workspace, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise InfraError(f"cannot run the session command {argv[0]!r}: {exc}") from exc
        if done.returncode == 0:
            return SessionReply(0, _parse_json(done.stdout, argv), {})
        if done.returncode == 1:
            parsed = _parse_json(done.stderr, argv)
            error = parsed.get("error", parsed)
            return SessionReply(1, {}, error if isinstance(error, Mapping) else {"message": str(error)})
        raise InputError(
            f"session command {' '.join(args)!r} failed with exit {done.returncode}: {done.stderr.strip()[:500]}"
        )

    def status(self) -> Mapping[str, Any]:
        reply = self.call("status")
        if not reply.ok:
            raise InfraError(f"the Host refused 'status': {reply.describe()}")
        return reply.data

    def submit(self, program: str, selector: str) -> SessionReply:
        return self.call("submit", program, "--episodes", selector)

    def finish(self, submission_ids: Iterable[str]) -> SessionReply:
        return self.call("finish", *submission_ids)


def _parse_json(text: str, argv: Sequence[str]) -> dict[str, Any]:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        raise InfraError(
            f"{' '.join(argv[-3:])!r} printed something that is not JSON: {text.strip()[:300]!r}"
        ) from None
    return data if isinstance(data, dict) else {"value": data}


def read_feedback(workspace: Path) -> dict[str, dict[str, Any]]:
    """Every ``feedback/<submission_id>/feedback.json`` in the workspace, by submission id (unreadable ones skipped)."""
    found: dict[str, dict[str, Any]] = {}
    root = workspace / "feedback"
    if not root.is_dir():
        return found
    for path in sorted(root.glob("*/feedback.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict):
            found[str(data.get("submission_id", path.parent.name))] = data
    return found
