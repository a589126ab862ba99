"""The built-in ``hill-climb`` agent: a search over the numbers in ``program/params.json``.

Run as ``python -m evoledger.kernel.agents.builtin.hill_climb`` in the workspace. The Program's ``policy.py`` reads
``params.json`` (a flat JSON object of numbers). When the Benchmark ships no such Program, the agent writes a
generic family of its own (:mod:`~evoledger.kernel.agents.builtin.families`: tabular or linear, sized from the
public spec in its task file) and says which in its log. The search (:mod:`~evoledger.kernel.agents.builtin.search`:
random restarts, hill climbing, candidates compared on the same pool indices and confirmed on more) decides every
submission; proposals are drawn from ``default_rng([seed, i])`` with the seed ``$EVOLEDGER_AGENT_SEED`` (default 0).
It stops when its confirmed candidates reach the Benchmark's declared target score or the budget is spent (all of
it under ``require_budget_exhaustion``), and finishes with its best confirmed candidates.

Restart-safe: before each submission it records the parameters as *pending* in ``analysis/agent-state.json``; on
start it rebuilds its history from that file and ``feedback/*/feedback.json`` (a pending entry is matched to the
newest Feedback it does not know yet). The search is a pure function of that history, so a restarted agent
proposes exactly what an uninterrupted one would have.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.agents.builtin.baseline import run_baseline
from evoledger.kernel.agents.builtin.families import family_for, public_spec, target_score, write_family
from evoledger.kernel.agents.builtin.search import Evaluation, Search, Step
from evoledger.kernel.agents.builtin.session_calls import (
    SessionCaller,
    SessionLimits,
    format_range,
    log,
    read_feedback,
)
from evoledger.ledger.errors import EvoLedgerError, InputError

__all__ = ["Entry", "HillClimber", "main"]

STATE_FILE: Final = "agent-state.json"
WANTED: Final = 2
"""Confirmed candidates the agent wants to finish with (at most the Run's candidate limit)."""
_MAX_REJECTIONS: Final = 3
_LOGGED_PARAMS: Final = 8

Params = dict[str, float]


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


def _range_of(selector: str) -> tuple[int, int] | None:
    start, sep, stop = selector.partition(":")
    if not sep or not start.isdigit() or not stop.isdigit():
        return None
    return int(start), int(stop)


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
    task_file: Path | None = None
    history: list[Entry] = field(default_factory=list)
    initial: Params = field(default_factory=dict)
    family: str | None = None
    finished: list[str] | None = None

    @property
    def params_path(self) -> Path:
        return self.workspace / "program" / "params.json"

    @property
    def state_path(self) -> Path:
        return self.workspace / "analysis" / STATE_FILE

    # -- state ------------------------------------------------------------------------------------------------

    def restore(self) -> bool:
        """Rebuild the history from ``analysis/agent-state.json`` and the Feedback mirror; False: nothing to tune."""
        feedback = read_feedback(self.workspace)
        pending: dict[str, Any] | None = None
        if self.state_path.is_file():
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            self.initial = {k: float(v) for k, v in state["initial_params"].items()}
            self.family = state.get("family")
            self.history = [Entry(e["submission_id"], e["params"], e["episodes"], e["score"]) for e in state["history"]]
            pending = state.get("pending")
            self.finished = state.get("finished")
            log(f"restored {len(self.history)} submissions from {self.state_path.name}")
        elif self.params_path.is_file():
            self.initial = _load_params(self.params_path)
            log(f"tuning the {len(self.initial)} parameters of program/params.json")
        else:
            family = family_for(public_spec(self.task_file))
            if family is None:
                log("program/ has no params.json and the task's spaces have no generic family: nothing to tune")
                return False
            write_family(self.workspace / "program", family)
            self.initial, self.family = dict(family.params), family.name
            log(
                f"program/ has no params.json: tuning the generic {family.name} family "
                f"({family.description}, {len(family.params)} parameters)"
            )
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
        return True

    def _save(self, pending: dict[str, Any] | None) -> None:
        state = {
            "agent": "hill-climb",
            "version": 2,
            "seed": self.seed,
            "family": self.family,
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

    def search(self, limits: SessionLimits) -> Search:
        """The search over this agent's own submissions so far."""
        search = Search(
            initial=self.initial,
            seed=self.seed,
            pool_size=limits.pool_size,
            cap=limits.max_episodes_per_submission,
            maximize=limits.maximize,
            target=target_score(public_spec(self.task_file)),
            wanted=min(WANTED, limits.max_candidates),
        )
        evaluations = []
        for entry in self.history:
            span = _range_of(entry.episodes)
            if entry.params is not None and span is not None:
                evaluations.append(Evaluation(entry.params, span[0], span[1], entry.score))
        search.observe(evaluations)
        return search

    def _next(self, limits: SessionLimits) -> tuple[Params, str, str] | None:
        """The parameters, selector and reason of the next submission, or None when the agent is done."""
        search = self.search(limits)
        step = search.next_step(limits.budget_left, limits.submissions_left)
        if step.action == "stop":
            if limits.finish_policy != "require_budget_exhaustion" or limits.budget_left == 0:
                log(f"search done: {step.why}")
                return None
            finalists = search.finalists(1)
            params = finalists[0].params if finalists else dict(self.initial)
            step = Step("submit", params, 0, 1, "spending the budget the Run requires")
        assert step.params is not None
        wanted = step.stop - step.start
        if limits.finish_policy == "require_budget_exhaustion":
            size = limits.batch_size(wanted)
            if size > wanted:  # the finish policy needs more Episodes than the step's block
                return step.params, format_range(0, size), f"{step.why}, widened to spend the budget"
        if wanted > limits.per_submission_cap or limits.submissions_left <= 0:
            return None
        return step.params, format_range(step.start, step.stop), step.why

    def candidates(self, limits: SessionLimits) -> list[str]:
        """The submissions to finish with, best first: the search's finalists and Feedback it did not make."""
        search = self.search(limits)
        by_params: dict[str, str] = {}
        for entry in self.history:
            if entry.params is not None:
                by_params.setdefault(json.dumps(entry.params, sort_keys=True), entry.submission_id)
        ranked: list[tuple[float | None, str]] = []
        for candidate in search.finalists(limits.max_candidates):
            ranked.append((search.mean(candidate), by_params[json.dumps(candidate.params, sort_keys=True)]))
        if not ranked:  # nothing on the screening block (a tiny pool or budget): rank what was submitted
            ranked = [(e.score, e.submission_id) for e in self.history if e.params is not None]
        ranked += [(e.score, e.submission_id) for e in self.history if e.params is None]
        sign = 1.0 if limits.maximize else -1.0
        scored = sorted((-sign * s, sid) for s, sid in ranked if s is not None)  # earlier submission first on ties
        return [sid for _, sid in scored][: limits.max_candidates]

    # -- loop -------------------------------------------------------------------------------------------------

    def run(self) -> int:
        if not self.restore():
            return run_baseline(self.workspace, self.caller)
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
            proposal = self._next(limits)
            if proposal is None:
                break
            params, selector, why = proposal
            self.params_path.write_text(json.dumps(params, indent=1, sort_keys=True) + "\n", encoding="utf-8")
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
            shown = f" params {json.dumps(params, sort_keys=True)}" if len(params) <= _LOGGED_PARAMS else ""
            log(f"{sid} episodes {selector} score {entry.score} ({why}){shown}")
            limits = limits.after_submission(reply.data)
        return self._finish(limits)

    def _finish(self, limits: SessionLimits | None) -> int:
        if limits is None:
            limits = SessionLimits.from_status(self.caller.status())
        ids = self.candidates(limits)
        if not ids:
            log("no scored submission to finish with")
            return 1
        best = next((e for e in self.history if e.submission_id == ids[0]), None)
        if best is not None and best.params is not None:
            self.params_path.write_text(json.dumps(best.params, indent=1, sort_keys=True) + "\n", encoding="utf-8")
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
    task_file = os.environ.get("EVOLEDGER_TASK_FILE")
    try:
        seed = int(os.environ.get("EVOLEDGER_AGENT_SEED", "0"))
        agent = HillClimber(
            workspace=workspace,
            caller=SessionCaller(workspace),
            seed=seed,
            task_file=Path(task_file) if task_file else None,
        )
        log(f"hill-climb agent: workspace {workspace}, seed {seed}")
        return agent.run()
    except (EvoLedgerError, ValueError) as exc:
        log(f"hill-climb agent stopped: {exc}")
        return exc.exit_code if isinstance(exc, EvoLedgerError) else 2


if __name__ == "__main__":
    sys.exit(main())
