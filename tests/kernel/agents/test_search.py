"""The hill-climb Agent's search as a pure function: matched Episodes, proposals, confirmation, stopping."""

from __future__ import annotations

from collections.abc import Callable

from evoledger.kernel.agents.builtin.search import CONFIRM_EPISODES, SCREEN_EPISODES, Evaluation, Search, Step

Objective = Callable[[dict[str, float], int, int], float]


def _quadratic(params: dict[str, float], start: int, stop: int) -> float:
    return -sum((params[k] - t) ** 2 for k, t in {"a": 1.0, "b": -2.0, "c": 0.5}.items())


def _drive(search: Search, objective: Objective, budget: int, submissions: int = 1000) -> list[Step]:
    """Run the search against ``objective`` until it stops; returns every submission step."""
    evaluations: list[Evaluation] = []
    steps: list[Step] = []
    while True:
        search.observe(evaluations)
        step = search.next_step(budget - search.spent, submissions - len(evaluations))
        if step.action == "stop":
            return steps
        assert step.params is not None
        steps.append(step)
        evaluations.append(
            Evaluation(step.params, step.start, step.stop, objective(step.params, step.start, step.stop))
        )


def _search(**options: object) -> Search:
    settings: dict[str, object] = {"initial": {"a": 0.0, "b": 0.0, "c": 0.0}, "seed": 0, "pool_size": 100, "cap": 100}
    settings.update(options)
    return Search(**settings)  # type: ignore[arg-type]


def test_every_candidate_is_screened_and_confirmed_on_the_same_pool_indices() -> None:
    steps = _drive(_search(), _quadratic, budget=60)
    assert {(s.start, s.stop) for s in steps} == {(0, SCREEN_EPISODES), (2, 2 + CONFIRM_EPISODES)}
    assert steps[0].params == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert steps[0].why == "the initial Program"
    screened = [s for s in steps if s.start == 0]
    confirmed = [s for s in steps if s.start != 0]
    assert len({tuple(sorted(s.params.items())) for s in screened if s.params}) == len(screened)  # always new points
    assert all(any(c.params == s.params for s in screened) for c in confirmed)  # only screened ones are confirmed
    assert sum(s.stop - s.start for s in steps) <= 60


def test_without_a_target_it_keeps_budget_to_confirm_its_best_at_the_end() -> None:
    search = _search(wanted=2)
    steps = _drive(search, _quadratic, budget=60)
    assert [s.why.startswith("confirming") for s in steps[-2:]] == [True, True]
    finalists = search.finalists(3)
    assert len(finalists) == 2
    assert all(c.confirmed for c in finalists)
    best_screen = max(c.screen for c in search.candidates if c.screen is not None)
    assert finalists[0].screen == best_screen
    assert finalists[0].screen is not None
    assert finalists[0].screen > _quadratic({"a": 0.0, "b": 0.0, "c": 0.0}, 0, 2)  # it climbed


def test_a_screening_that_reaches_the_target_is_confirmed_and_the_search_stops_early() -> None:
    search = _search(initial={"a": 1.0, "b": -2.0, "c": 0.5}, target=-0.01, wanted=1)
    steps = _drive(search, _quadratic, budget=100)
    assert [(s.start, s.stop) for s in steps] == [(0, 2), (2, 10)]
    assert search.next_step(90, 90).why.startswith("1 confirmed candidates reach the target")


def test_the_same_history_gives_the_same_next_step_and_the_seed_changes_it() -> None:
    history = [Evaluation(s.params or {}, s.start, s.stop, 0.0) for s in _drive(_search(seed=5), _quadratic, 12)]
    again, replayed, other = _search(seed=5), _search(seed=5), _search(seed=6)
    for search in (again, replayed, other):
        search.observe(history)
    assert again.next_step(50, 50) == replayed.next_step(50, 50)
    assert again.next_step(50, 50).params != other.next_step(50, 50).params


def test_a_score_to_minimize_climbs_down() -> None:
    search = _search(maximize=False)
    _drive(search, lambda p, a, b: -_quadratic(p, a, b), budget=60)
    best = search.finalists(1)[0]
    assert best.screen is not None
    assert best.screen < -_quadratic({"a": 0.0, "b": 0.0, "c": 0.0}, 0, 2)


def test_a_one_episode_pool_screens_on_it_and_never_confirms() -> None:
    search = _search(pool_size=1, cap=1)
    steps = _drive(search, _quadratic, budget=5)
    assert [(s.start, s.stop) for s in steps] == [(0, 1)] * 5
    assert not any(c.confirmed for c in search.candidates)
    assert len(search.finalists(2)) == 2


def test_evaluations_off_the_blocks_are_ignored() -> None:
    search = _search()
    search.observe([Evaluation({"a": 9.0, "b": 9.0, "c": 9.0}, 0, 5, 1e9)])
    assert search.candidates == []
    assert search.spent == 5
    assert search.next_step(10, 10).why == "the initial Program"


def test_proposals_do_not_depend_on_the_order_of_the_keys() -> None:
    forward = _search(initial={"a": 0.0, "b": 1.0})
    backward = _search(initial={"b": 1.0, "a": 0.0})
    first = [s.params for s in _drive(forward, lambda p, a, b: -abs(p["a"] - p["b"]), budget=20)]
    second = [s.params for s in _drive(backward, lambda p, a, b: -abs(p["a"] - p["b"]), budget=20)]
    assert first == second
    assert len(first) > 2
