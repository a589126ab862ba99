"""The built-in ``hill-climb`` agent: random-perturbation hill climbing on ``program/params.json``.

Run as ``python -m evoledger.kernel.agents.builtin.hill_climb`` in the workspace. The Program's ``policy.py``
reads ``params.json`` (a flat dict of numbers). The agent submits the initial Program, then repeatedly perturbs
the best parameters found so far with a seeded numpy Generator (seed ``$EVOLEDGER_AGENT_SEED``, default 0),
writes them to ``program/params.json``, submits, and keeps whichever scores best. Every candidate is scored on
the same pool indices (``0:b``), so candidates are compared on the same hidden Episodes. It spends the whole
budget, respecting the limits ``evoledger-session status`` reports, and finishes with its best 1..k submissions.

Restart-safe: before each submission it records the parameters as *pending* in ``analysis/agent-state.json``;
on start it rebuilds its history from that file and ``feedback/*/feedback.json`` (a pending entry is matched to
the newest Feedback it does not know yet). The perturbation of step ``i`` uses ``default_rng([seed, i])`` and
the step size is a pure function of the history, so a restarted agent proposes exactly what an uninterrupted
one would have.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
from evoledger.kernel.agents.builtin.session_calls import (
    SessionCaller,
    SessionLimits,
    format_range,
    log,
    read_feedback,
)
from evoledger.ledger.errors import EvoLedgerError, InputError

__all__ = ["HillClimber", "main", "perturb", "step_size"]

STATE_FILE: Final = "agent-state.json"
PREFERRED_BATCH: Final = 3
INITIAL_STEP: Final = 0.5
_MAX_REJECTIONS: Final = 3

Params = dict[str, float]


def step_size(improvements: list[bool]) -> float:
    """The perturbation scale after a sequence of (improved?) outcomes: grow on success, shrink on failure."""
    sigma = INITIAL_STEP
    for improved in improvements:
        sigma = min(sigma * 1.5, 4.0) if improved else max(sigma * 0.85, 0.02)
    return sigma


def perturb(params: Params, sigma: float, rng: np.random.Generator) -> Params:
    """``params`` plus Gaussian noise of scale ``sigma`` (in sorted key order, so the draw is reproducible)."""
    keys = sorted(params)
    noise = rng.normal(0.0, sigma, size=len(keys))
    return {key: round(float(params[key] + delta), 6) for key, delta in zip(keys, noise, strict=True)}


def _load_params(path: Path) -> Params:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(
            f"cannot read the Program parameters {str(path)!r}: {exc}; the hill-climb agent needs a "
            "program/params.json holding a flat JSON object of numbers"
        ) from None
    if not isinstance(data, dict) or not data:
        raise InputError(f"{str(path)!r} must hold a non-empty flat JSON object of numbers, got {data!r:.100}")
    bad = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, (int, float))]
    if bad:
        raise InputError(f"{str(path)!r}: values of {bad} are not numbers; hill-climb perturbs numeric values only")
    return {str(k): float(v) for k, v in data.items()}


@dataclass
class Entry:
    """One submission this agent knows of (``params`` is None for submissions it did not make itself)."""

    submission_id: str
    params: Params | None
    episodes: str
    score: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "submission_id": self.submission_id,
            "params": self.params,
            "episodes": self.episodes,
            "score": self.score,
        }


@dataclass
class HillClimber:
    """The agent's state and loop; ``run()`` returns the process exit code."""

    workspace: Path
    caller: SessionCaller
    seed: int = 0
    batch: int = PREFERRED_BATCH
    history: list[Entry] = field(default_factory=list)
    initial: Params = field(default_factory=dict)
    finished: list[str] | None = None

    @property
    def params_path(self) -> Path:
        return self.workspace / "program" / "params.json"

    @property
    def state_path(self) -> Path:
        return self.workspace / "analysis" / STATE_FILE

    # -- state ------------------------------------------------------------------------------------------------

    def restore(self) -> None:
        """Rebuild the history from ``analysis/agent-state.json`` and the Feedback mirror."""
        feedback = read_feedback(self.workspace)
        pending: dict[str, Any] | None = None
        if self.state_path.is_file():
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            self.initial = {k: float(v) for k, v in state["initial_params"].items()}
            self.history = [Entry(e["submission_id"], e["params"], e["episodes"], e["score"]) for e in state["history"]]
            pending = state.get("pending")
            self.finished = state.get("finished")
            log(f"restored {len(self.history)} submissions from {self.state_path.name}")
        else:
            self.initial = _load_params(self.params_path)
        known = {e.submission_id for e in self.history}
        unknown = sorted(set(feedback) - known)
        if pending is not None and unknown:
            newest = unknown.pop()
            self.history.append(Entry(newest, pending["params"], pending["episodes"], None))
            log(f"matched the pending submission to {newest}")
        for sid in unknown:
            self.history.append(Entry(sid, None, "", None))
            log(f"found Feedback for {sid} (not made by this agent): a finish candidate, not a parent")
        for entry in self.history:
            score = feedback.get(entry.submission_id, {}).get("score", entry.score)
            entry.score = float(score) if isinstance(score, (int, float)) else None
        self.history.sort(key=lambda e: e.submission_id)
        self._save(pending=None)

    def _save(self, pending: dict[str, Any] | None) -> None:
        state = {
            "agent": "hill-climb",
            "version": 1,
            "seed": self.seed,
            "initial_params": self.initial,
            "history": [e.as_json() for e in self.history],
            "pending": pending,
            "finished": self.finished,
        }
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
        tmp.replace(self.state_path)

    # -- decisions --------------------------------------------------------------------------------------------

    def _better(self, a: float | None, b: float | None, maximize: bool) -> bool:
        if a is None:
            return False
        if b is None:
            return True
        return a > b if maximize else a < b

    def own(self) -> list[Entry]:
        return [e for e in self.history if e.params is not None]

    def best(self, entries: list[Entry], maximize: bool) -> Entry | None:
        top: Entry | None = None
        for entry in entries:
            if top is None or self._better(entry.score, top.score, maximize):
                top = entry
        return top

    def proposal(self, maximize: bool) -> Params:
        """The parameters to submit next: the initial ones first, then a perturbation of the best so far."""
        own = self.own()
        if not own:
            return dict(self.initial)
        improvements: list[bool] = []
        best_score: float | None = None
        for entry in own:
            improvements.append(self._better(entry.score, best_score, maximize))
            if improvements[-1]:
                best_score = entry.score
        parent = self.best(own, maximize)
        assert parent is not None
        assert parent.params is not None
        sigma = step_size(improvements[1:])
        return perturb(parent.params, sigma, np.random.default_rng([self.seed, len(own)]))

    def candidates(self, k: int, maximize: bool) -> list[str]:
        """The best ``k`` scored submissions, best first (earlier submission first on ties)."""
        scored = [(e.score, e.submission_id) for e in self.history if e.score is not None]
        ranked = sorted(scored, key=lambda pair: (-pair[0] if maximize else pair[0], pair[1]))
        return [sid for _, sid in ranked[:k]]

    # -- loop -------------------------------------------------------------------------------------------------

    def run(self) -> int:
        self.restore()
        if self.finished:
            log(f"already finished with {self.finished}; nothing to do")
            return 0
        rejections = 0
        limits: SessionLimits | None = None
        while True:
            if limits is None:
                limits = SessionLimits.from_status(self.caller.status())
                if limits.finished:
                    log("the Session is already finished; nothing to do")
                    return 0
            size = limits.batch_size(self.batch)
            if size == 0:
                log(f"budget left {limits.budget_left}, submissions left {limits.submissions_left}: done exploring")
                break
            params = self.proposal(limits.maximize)
            selector = format_range(0, size)
            self.params_path.write_text(json.dumps(params, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            self._save(pending={"params": params, "episodes": selector})
            reply = self.caller.submit("program", selector)
            if not reply.ok:
                self._save(pending=None)
                limits = None
                rejections += 1
                log(f"submission refused ({reply.describe()})")
                if rejections >= _MAX_REJECTIONS:
                    break
                time.sleep(0.2 * rejections if reply.retryable else 0.0)
                continue
            rejections = 0
            sid = str(reply.data["submission_id"])
            score = reply.data.get("score")
            if not isinstance(score, (int, float)):
                score = read_feedback(self.workspace).get(sid, {}).get("score")
            entry = Entry(sid, params, selector, float(score) if isinstance(score, (int, float)) else None)
            self.history.append(entry)
            self._save(pending=None)
            log(f"{sid} episodes {selector} score {entry.score} params {json.dumps(params, sort_keys=True)}")
            limits = limits.after_submission(reply.data)
        return self._finish(limits)

    def _finish(self, limits: SessionLimits | None) -> int:
        if limits is None:
            limits = SessionLimits.from_status(self.caller.status())
        ids = self.candidates(limits.max_candidates, limits.maximize)
        if not ids:
            log("no scored submission to finish with")
            return 1
        best = self.best([e for e in self.history if e.submission_id == ids[0]], limits.maximize)
        if best is not None and best.params is not None:
            self.params_path.write_text(json.dumps(best.params, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        reply = self.caller.finish(ids)
        if not reply.ok:
            log(f"finish {ids} refused ({reply.describe()})")
            return 1
        self.finished = ids
        self._save(pending=None)
        log(f"finished with {ids}")
        return 0


def main() -> int:
    workspace = Path(os.environ.get("EVOLEDGER_WORKSPACE", ".")).resolve()
    try:
        seed = int(os.environ.get("EVOLEDGER_AGENT_SEED", "0"))
        agent = HillClimber(workspace=workspace, caller=SessionCaller(workspace), seed=seed)
        log(f"hill-climb agent: workspace {workspace}, seed {seed}")
        return agent.run()
    except (EvoLedgerError, ValueError) as exc:
        log(f"hill-climb agent stopped: {exc}")
        return exc.exit_code if isinstance(exc, EvoLedgerError) else 2


if __name__ == "__main__":
    sys.exit(main())
