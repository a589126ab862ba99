"""A fake ``evoledger-session`` executable for testing the built-in agents as real processes.

The fake keeps its state in a JSON file, enforces the budget rules (budget, submissions, per-submission cap,
pool range, strictly increasing selectors, ``require_budget_exhaustion``), writes Feedback into the workspace and
scores ``program/params.json`` deterministically: ``-sum((p - target)^2)`` (``scorer="sum"``: the sum of the values, for
any keys). With ``scorer="cartpole"`` it instead
runs the submitted Program on gymnasium's CartPole (Episode ``i`` is seeded with ``i``) and scores the mean return.
``crash_after_submit = n`` makes it SIGKILL its caller (the agent) right after accepting submission ``n``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.agents import AgentExit, AgentSupervisor, AgentTask, BuiltinAgent

FAKE_SESSION = r"""
import json, os, signal, sys
from pathlib import Path

STATE = Path(__STATE__)


def load():
    return json.loads(STATE.read_text())


def save(state):
    STATE.write_text(json.dumps(state, indent=1, sort_keys=True))


def reject(state, code, message, retryable=False):
    save(state)
    print(json.dumps({"error": {"code": code, "message": message, "retryable": retryable}}), file=sys.stderr)
    sys.exit(1)


def usage(state, message):
    save(state)
    print(json.dumps({"error": {"code": "usage", "message": message, "retryable": False}}), file=sys.stderr)
    sys.exit(2)


def parse_selector(state, text):
    indices = []
    for part in text.split(","):
        start, _, stop = part.partition(":")
        start, stop = int(start), int(stop) if stop else int(start) + 1
        if start >= stop:
            usage(state, f"empty range {part}")
        indices.extend(range(start, stop))
    if any(b <= a for a, b in zip(indices, indices[1:])):
        usage(state, f"selector {text} is not strictly increasing")
    if indices and indices[-1] >= state["pool_size"]:
        usage(state, f"index {indices[-1]} outside the pool")
    return indices


def cartpole_score(program, indices):
    import importlib.util
    import gymnasium as gym

    spec = importlib.util.spec_from_file_location("fake_policy", program / "policy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    returns = []
    for i in indices:
        env = gym.make("CartPole-v1")
        policy = module.make_policy(None)
        obs, _ = env.reset(seed=i)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy.act(obs))
            total += reward
            done = terminated or truncated
        returns.append(total)
    return sum(returns) / len(returns)


def main():
    state = load()
    args = sys.argv[1:]
    state["calls"].append(args)
    workspace = Path(os.environ.get("EVOLEDGER_WORKSPACE", "."))
    left = state["budget"] - state["used"]
    subs_left = state["max_submissions"] - len(state["submissions"])
    if not args:
        usage(state, "missing command")
    if args[0] == "status":
        save(state)
        print(json.dumps({
            "budget_left": left, "submissions_left": subs_left, "pool_size": state["pool_size"],
            "max_episodes_per_submission": state["max_eps"], "max_candidates": state["max_candidates"],
            "finish_budget_policy": state["policy"], "finished": state["finished"] is not None,
        }))
        return
    if args[0] == "submit":
        if len(args) != 4 or args[2] != "--episodes":
            usage(state, f"bad submit arguments {args}")
        indices = parse_selector(state, args[3])
        if state["finished"] is not None:
            reject(state, "session_closed", "finished")
        if subs_left <= 0:
            reject(state, "submission_limit", "no submissions left")
        if len(indices) > state["max_eps"]:
            reject(state, "too_many_episodes", "too many episodes")
        if len(indices) > left:
            reject(state, "budget_exhausted", "over budget")
        if state["policy"] == "require_budget_exhaustion":
            after = left - len(indices)
            if after > (subs_left - 1) * min(state["max_eps"], state["pool_size"]):
                reject(state, "exhaustion_impossible", "budget could no longer be spent")
        program = workspace / args[1]
        params = json.loads((program / "params.json").read_text()) if (program / "params.json").exists() else {}
        if state["scorer"] == "cartpole":
            score = cartpole_score(program, indices)
        elif state["scorer"] == "sum":
            score = sum(params.values())
        else:
            score = -sum((params[k] - state["target"][k]) ** 2 for k in sorted(params))
        state["used"] += len(indices)
        sid = "submission-%06d" % (len(state["submissions"]) + 1)
        state["submissions"].append({"id": sid, "params": params, "indices": indices, "score": score})
        feedback = {"submission_id": sid, "score": score, "content": "fake", "episodes": indices,
                    "budget_used": state["used"], "budget_left": state["budget"] - state["used"]}
        folder = workspace / "feedback" / sid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "feedback.json").write_text(json.dumps(feedback))
        (workspace / "feedback" / "latest.json").write_text(json.dumps(feedback))
        save(state)
        reply = {"submission_id": sid, "score": score}
        if state.get("reply_limits", True):
            reply.update(budget_left=state["budget"] - state["used"],
                         submissions_left=state["max_submissions"] - len(state["submissions"]))
        print(json.dumps(reply))
        sys.stdout.flush()
        if state["crash_after_submit"] == len(state["submissions"]):
            state["crash_after_submit"] = None
            save(state)
            os.kill(os.getppid(), signal.SIGKILL)
        return
    if args[0] == "finish":
        ids = args[1:]
        known = {s["id"] for s in state["submissions"]}
        if state["finished"] is not None:
            reject(state, "session_closed", "already finished")
        if not ids or any(i not in known for i in ids) or len(ids) > state["max_candidates"]:
            reject(state, "bad_candidates", f"bad candidates {ids}")
        if state["policy"] == "require_budget_exhaustion" and left > 0:
            reject(state, "budget_remaining", "budget remains", True)
        state["finished"] = ids
        save(state)
        print(json.dumps({"finished": ids}))
        return
    usage(state, f"unknown command {args[0]}")


main()
"""


@dataclass
class FakeSession:
    """A fake Host reachable through ``evoledger-session`` on a private PATH, plus a workspace."""

    root: Path
    workspace: Path
    bin_dir: Path
    state_path: Path
    runs: int = 0

    def configure(self, **settings: Any) -> None:
        state = self.state()
        state.update(settings)
        self.state_path.write_text(json.dumps(state))

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.state_path.read_text())
        return data

    def calls(self) -> list[list[str]]:
        return [list(c) for c in self.state()["calls"]]

    def submissions(self) -> list[dict[str, Any]]:
        return list(self.state()["submissions"])

    def parent_env(self) -> dict[str, str]:
        env = {
            "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": os.environ.get("HOME", str(self.root)),
            "SECRET_API_TOKEN": "must-not-leak",
        }
        if "PYTHONPATH" in os.environ:  # the agent imports the evoledger under test
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        return env

    def run_agent(
        self, name: str, seed: int = 0, timeout: float = 120.0, spec: dict[str, Any] | None = None
    ) -> AgentExit:
        """Run a built-in agent as a real process under the supervisor and return how it ended.

        ``spec``: a Benchmark's public spec, handed over as a real Run does: as the JSON block of the task file.
        """
        self.runs += 1
        module = {"baseline": "baseline", "hill-climb": "hill_climb"}[name]
        agent = BuiltinAgent(name=name, module=f"evoledger.kernel.agents.builtin.{module}", seed=seed)
        task_file = self.root / "task.md"
        task_file.write_text(f"# test task\n\n```json\n{json.dumps(spec or {}, indent=2)}\n```\n")
        task = AgentTask(task_text="# test task\n", workspace=self.workspace, timeout=timeout)
        supervisor = AgentSupervisor(
            agent,
            task,
            log_dir=self.root / f"logs-{self.runs}",
            host_env={
                "EVOLEDGER_WORKSPACE": str(self.workspace),
                "EVOLEDGER_SESSION_SOCKET": str(self.root / "s"),
                "EVOLEDGER_TASK_FILE": str(task_file),
            },
            parent_env=self.parent_env(),
        )
        supervisor.start()
        return supervisor.wait()


@pytest.fixture
def fake_session(tmp_path: Path) -> FakeSession:
    root = tmp_path
    workspace = root / "workspace"
    for sub in ("program", "analysis", "feedback"):
        (workspace / sub).mkdir(parents=True)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    state_path = root / "fake-session.json"
    state_path.write_text(
        json.dumps(
            {
                "budget": 20,
                "used": 0,
                "pool_size": 10,
                "max_eps": 5,
                "max_submissions": 20,
                "max_candidates": 2,
                "policy": "allow_early",
                "target": {"a": 1.0, "b": -2.0, "c": 0.5},
                "scorer": "params",
                "crash_after_submit": None,
                "calls": [],
                "submissions": [],
                "finished": None,
            }
        )
    )
    script = bin_dir / "evoledger-session"
    script.write_text(f"#!{sys.executable}\n" + FAKE_SESSION.replace("__STATE__", repr(str(state_path))))
    script.chmod(0o755)
    (workspace / "program" / "params.json").write_text(json.dumps({"a": 0.0, "b": 0.0, "c": 0.0}))
    (workspace / "program" / "policy.py").write_text("def make_policy(context):\n    return None\n")
    return FakeSession(root=root, workspace=workspace, bin_dir=bin_dir, state_path=state_path)
