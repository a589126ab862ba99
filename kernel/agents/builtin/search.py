"""The hill-climb Agent's search: hill climbing with random restarts over a flat vector of numbers, on matched Episodes.

The search is a pure function of ``(seed, initial parameters, the evaluations so far)``: :meth:`Search.next_step`
says what to submit next, or to stop, so a restarted Agent that rebuilt its history proposes exactly what an
uninterrupted one would have.

**Matched comparisons.** Every candidate is *screened* on the same pool indices (``0:2``), so any two candidates
are compared on the same hidden Episodes. A candidate worth a closer look is *confirmed* on the next indices
(``2:10``), the same for every confirmed candidate, and ranked by its mean over both.

**Proposals.** Candidate 0 is the initial Program; candidates 1 to :data:`RANDOM_STARTS` are random restarts
(Gaussian around the initial parameters, scale :data:`RESTART_SCALE`), and so is every candidate after
:data:`PATIENCE` screenings in a row without progress; the others perturb the best screened candidate by a
step relative to its size that grows after progress and shrinks otherwise (the 1/5th-rule spirit).

**Confirming and stopping.** When the Benchmark declares a target score, a candidate whose screening reaches it is
confirmed at once, and the search stops as soon as :attr:`Search.wanted` confirmed candidates reach it. Otherwise
the search keeps enough budget (at most half of it) to confirm its best screened candidates at the end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

__all__ = [
    "CONFIRM_EPISODES",
    "PATIENCE",
    "RANDOM_STARTS",
    "RESTART_SCALE",
    "SCREEN_EPISODES",
    "Candidate",
    "Evaluation",
    "Search",
    "Step",
]

Params = dict[str, float]

SCREEN_EPISODES: Final = 2
"""Episodes every candidate is screened on (pool indices ``0:2``)."""
CONFIRM_EPISODES: Final = 8
"""Episodes a promising candidate is confirmed on (pool indices ``2:10``)."""
RANDOM_STARTS: Final = 8
"""Random restarts tried right after the initial Program."""
PATIENCE: Final = 8
"""Screenings in a row without progress after which the next candidate is a random restart."""
RESTART_SCALE: Final = 1.0
"""Scale of the Gaussian around the initial parameters for a random restart."""
_STEP_INITIAL: Final = 0.5
_STEP_MIN: Final = 0.02
_STEP_MAX: Final = 2.0


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One accepted submission: ``params`` scored ``score`` on the pool indices ``start:stop``."""

    params: Mapping[str, float]
    start: int
    stop: int
    score: float | None


@dataclass(slots=True)
class Candidate:
    """One parameter vector, its screening score and (once confirmed) its confirmation score."""

    number: int
    params: Params
    screen: float | None
    confirm: float | None = None
    confirmed: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """What to do next: submit ``params`` on ``start:stop`` (``why`` says which role it plays), or stop."""

    action: Literal["submit", "stop"]
    params: Params | None = None
    start: int = 0
    stop: int = 0
    why: str = ""


@dataclass
class Search:
    """The search over the keys of ``initial`` within a pool of ``pool_size`` indices and ``cap`` per submission.

    ``target``: the score the Benchmark calls solved (``None``: unknown); ``wanted``: how many confirmed candidates
    to finish with; ``maximize`` False for a score to minimize.
    """

    initial: Params
    seed: int
    pool_size: int
    cap: int
    maximize: bool = True
    target: float | None = None
    wanted: int = 2
    candidates: list[Candidate] = field(default_factory=list)
    spent: int = 0
    """Episodes the observed evaluations used."""

    @property
    def screen_block(self) -> tuple[int, int]:
        return (0, max(0, min(SCREEN_EPISODES, self.cap, self.pool_size)))

    @property
    def confirm_block(self) -> tuple[int, int]:
        start = self.screen_block[1]
        return (start, start + max(0, min(CONFIRM_EPISODES, self.cap, self.pool_size - start)))

    # -- the record ---------------------------------------------------------------------------------------------

    def observe(self, evaluations: Sequence[Evaluation]) -> None:
        """Rebuild the candidates from every evaluation so far (evaluations on other indices are ignored)."""
        self.candidates = []
        self.spent = sum(max(0, ev.stop - ev.start) for ev in evaluations)
        by_key: dict[tuple[tuple[str, float], ...], Candidate] = {}
        for ev in evaluations:
            key = _key(ev.params)
            if (ev.start, ev.stop) == self.screen_block and key not in by_key:
                by_key[key] = Candidate(len(self.candidates), {k: float(v) for k, v in ev.params.items()}, ev.score)
                self.candidates.append(by_key[key])
            elif (ev.start, ev.stop) == self.confirm_block and key in by_key:
                by_key[key].confirm, by_key[key].confirmed = ev.score, True

    # -- judging scores -----------------------------------------------------------------------------------------

    def better(self, a: float | None, b: float | None) -> bool:
        """Whether score ``a`` is strictly better than ``b`` (a missing score is worst)."""
        if a is None:
            return False
        if b is None:
            return True
        return a > b if self.maximize else a < b

    def reaches_target(self, score: float | None) -> bool:
        """Whether ``score`` reaches the declared target (never, without one)."""
        return self.target is not None and score is not None and not self.better(self.target, score)

    def mean(self, candidate: Candidate) -> float | None:
        """Its mean score over every Episode it was scored on (screening and confirmation, weighted by size)."""
        screen_n = self.screen_block[1] - self.screen_block[0]
        confirm_n = self.confirm_block[1] - self.confirm_block[0]
        screen, confirm = candidate.screen, candidate.confirm
        if screen is None or not candidate.confirmed or confirm_n == 0:
            return screen
        return None if confirm is None else (screen * screen_n + confirm * confirm_n) / (screen_n + confirm_n)

    def ranked(self) -> list[Candidate]:
        """Candidates best first: confirmed ones before the others, then by their mean; earlier first on ties."""

        def key(c: Candidate) -> tuple[bool, float, int]:
            mean = self.mean(c)
            value = -math.inf if mean is None else (mean if self.maximize else -mean)
            return (not c.confirmed, -value, c.number)

        return sorted(self.candidates, key=key)

    def finalists(self, limit: int) -> list[Candidate]:
        """The candidates to finish with (at most ``limit``): the confirmed ones if any, else the best screened."""
        ranked = self.ranked()
        confirmed = [c for c in ranked if c.confirmed]
        return (confirmed or ranked)[:limit]

    # -- the climb ----------------------------------------------------------------------------------------------

    def climb(self) -> tuple[Candidate | None, list[bool]]:
        """The best screened candidate (the parent of perturbations) and, per later candidate, whether it was."""
        best: Candidate | None = None
        progress: list[bool] = []
        for candidate in self.candidates:
            tie_at_target = best is not None and candidate.screen == best.screen and self.reaches_target(best.screen)
            if best is None or self.better(candidate.screen, best.screen) or tie_at_target:
                if best is not None:
                    progress.append(True)
                best = candidate
            else:
                progress.append(False)
        return best, progress

    def _proposal(self) -> Step:
        number = len(self.candidates)
        start, stop = self.screen_block
        best, progress = self.climb()
        if number == 0 or best is None:
            return Step("submit", dict(self.initial), start, stop, "the initial Program")
        rng = np.random.default_rng([self.seed, number])
        stalled = 0
        for improved in reversed(progress):
            if improved:
                break
            stalled += 1
        if number <= RANDOM_STARTS or (stalled and stalled % PATIENCE == 0):
            return Step("submit", _perturb(self.initial, RESTART_SCALE, rng), start, stop, "a random restart")
        sigma = _STEP_INITIAL
        for improved in progress[RANDOM_STARTS:]:
            sigma = min(sigma * 1.5, _STEP_MAX) if improved else max(sigma * 0.85, _STEP_MIN)
        values = np.array(list(best.params.values()), dtype=np.float64)
        size = float(np.sqrt(np.mean(values**2))) if values.size else 0.0
        scale = sigma * (size if size > 0 else RESTART_SCALE)
        return Step("submit", _perturb(best.params, scale, rng), start, stop, f"candidate {best.number} perturbed")

    def next_step(self, budget_left: int, submissions_left: int) -> Step:
        """What to do next, from the evaluations :meth:`observe` was given and what the Session still allows."""
        screen_n = self.screen_block[1] - self.screen_block[0]
        confirm_start, confirm_stop = self.confirm_block
        confirm_n = confirm_stop - confirm_start
        if screen_n == 0:
            return Step("stop", why="the pool has no Episodes")
        solved = [c for c in self.candidates if c.confirmed and self.reaches_target(self.mean(c))]
        if len(solved) >= self.wanted:
            return Step("stop", why=f"{len(solved)} confirmed candidates reach the target score {self.target}")
        can_confirm = confirm_n > 0 and budget_left >= confirm_n and submissions_left >= 1
        for c in self.candidates:  # a screening that reached the target is confirmed at once
            if not c.confirmed and self.reaches_target(c.screen) and can_confirm:
                return Step("submit", dict(c.params), confirm_start, confirm_stop, f"confirming candidate {c.number}")
        confirmed = sum(c.confirmed for c in self.candidates)
        owed = max(0, self.wanted - confirmed) if confirm_n > 0 else 0
        reserve = min(owed * confirm_n, (budget_left + self.spent) // 2)  # a small budget is mostly for exploring
        if budget_left < confirm_n:
            reserve = 0  # too little left to confirm anything: explore with the rest
        if budget_left - screen_n >= reserve and submissions_left - 1 >= owed:
            return self._proposal()
        for c in self.ranked():  # out of room to explore: confirm the best screened candidates
            if not c.confirmed and owed > 0 and can_confirm and c.screen is not None:
                return Step("submit", dict(c.params), confirm_start, confirm_stop, f"confirming candidate {c.number}")
        return Step("stop", why="the budget is spent")


def _key(params: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((str(k), float(v)) for k, v in params.items()))


def _perturb(params: Mapping[str, float], sigma: float, rng: np.random.Generator) -> Params:
    """``params`` plus Gaussian noise of scale ``sigma`` (drawn in sorted key order, so it is reproducible)."""
    keys = sorted(params)
    noise = rng.normal(0.0, sigma, size=len(keys))
    return {key: round(float(params[key] + delta), 6) for key, delta in zip(keys, noise, strict=True)}
