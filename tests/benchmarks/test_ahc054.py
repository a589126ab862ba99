"""AtCoder AHC054 Treant's Forest: turn rules on a tiny hand-traced map, the whole-set rejection rule, the generator
against hashlib and its invariants, the Environment and the Feedback (never the private target order)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.ahc054 import MAX_TURNS, NAME, TRACE_TRANSITIONS, make_treants_forest
from evoledger.benchmarks.ahc054_rules import (
    GENERATOR_DOMAIN,
    ForestCase,
    ForestSimulation,
    InvalidPlacements,
    generate_case,
)
from evoledger.kernel.authoring import EpisodeRecord, EpisodeSpec, InvalidAction, benchmark_programs, check_benchmark
from evoledger.tests.benchmarks.conftest import PlayProgram

# A 5x5 forest without trees; entrance (0, 2), flower (4, 0). The private order starts with (4, 4), then every other
# cell row-major.
ORDER = ((4, 4), *((r, c) for r in range(5) for c in range(5) if (r, c) not in ((0, 2), (4, 4))))
TINY = ForestCase(size=5, trees=frozenset(), flower=(4, 0), target_order=ORDER)


def _play(case: ForestCase, first: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The adventurer's cells after each turn, with ``first`` placed on turn 1 and nothing afterwards."""
    simulation = ForestSimulation(case)
    path = []
    placements = first
    while not simulation.done:
        simulation.step(placements)
        placements = []
        path.append(divmod(simulation.position, case.size))
    return path


def test_tiny_map_without_treants_by_hand() -> None:
    # Turn 1 at (0,2): reveals column 2 and row 0; target (4,4); down (1,2) and right (0,3) are both at distance 5:
    # the first examined (down) wins. Turns 2-4 go down (distance 4, 3, 2; down before right on the tie at (3,2)).
    # Turn 5 at (4,2) reveals (4,1) and (4,0): the flower becomes the target; turn 6 reaches it.
    assert _play(TINY, []) == [(1, 2), (2, 2), (3, 2), (4, 2), (4, 1), (4, 0)]


def test_tiny_map_with_one_treant_by_hand() -> None:
    # A treant on (4,1) at turn 1. Turn 5 at (4,2): the ray west stops at the treant, so the flower stays hidden and
    # (4,4), now revealed, is dropped; the only unrevealed cell left is the flower itself (a plain target): around
    # the treant, up (3,2), left (3,1), left (3,0); turn 8 at (3,0) reveals the flower and steps onto it.
    path = _play(TINY, [(4, 1)])
    assert path == [(1, 2), (2, 2), (3, 2), (4, 2), (3, 2), (3, 1), (3, 0), (4, 0)]
    assert len(path) == 8


@pytest.mark.parametrize(
    ("placements", "rule"),
    [
        ([(0, 1)], "already revealed"),  # revealed on turn 1
        ([(4, 0)], "the flower"),
        ([(3, 3), (3, 3)], "appears twice"),
        ([(5, 0)], "off the 5x5 map"),
        ([(-1, 2)], "off the 5x5 map"),
        ([(3, 0), (4, 1)], "cannot be reached from the entrance"),  # walls the flower in
        ([(3, 3), (3, 0), (4, 1)], "cannot be reached"),  # a legal cell does not save the set
    ],
)
def test_a_set_breaking_any_rule_is_rejected_whole_and_changes_nothing(
    placements: list[tuple[int, int]], rule: str
) -> None:
    simulation = ForestSimulation(TINY)
    simulation.step([])
    before = (simulation.turn, simulation.position, bytes(simulation.trees), simulation.placed)
    with pytest.raises(InvalidPlacements, match=rule):
        simulation.step(placements)
    assert (simulation.turn, simulation.position, bytes(simulation.trees), simulation.placed) == before
    simulation.step([(3, 3)])  # a legal one is then accepted
    assert simulation.placed == 1


def test_the_flower_must_stay_reachable_from_the_adventurer_too() -> None:
    # In play the adventurer is always joined to the entrance by revealed cells, which take no treant, so this rule
    # only bites on its own in a state put together by hand: the adventurer moved to (4,4), then (3,4) and (4,3)
    # (both unrevealed) would shut it in while the entrance still reaches the flower.
    simulation = ForestSimulation(TINY)
    simulation.step([])
    simulation.position = 4 * 5 + 4
    with pytest.raises(InvalidPlacements, match="from the adventurer"):
        simulation.check([(3, 4), (4, 3)])
    assert simulation.check([(3, 4)]) == [19]


def _draw(seed: int, counter: int) -> int:
    message = GENERATOR_DOMAIN + seed.to_bytes(8, "big") + counter.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


@pytest.mark.parametrize("seed", range(4))
def test_generated_forests_follow_the_rules(seed: int) -> None:
    case = generate_case(seed)
    size = case.size
    assert size == 20 + _draw(seed, 0) % 21  # no rejection for n = 21 below 2**64 - 16
    entrance = (0, size // 2)
    assert entrance == case.entrance
    assert 1 <= len(case.trees) <= size * size // 6
    assert entrance not in case.trees
    assert case.flower not in case.trees
    assert abs(case.flower[0]) + abs(case.flower[1] - size // 2) >= 5
    assert sorted(case.target_order) == sorted((r, c) for r in range(size) for c in range(size) if (r, c) != entrance)
    simulation = ForestSimulation(case)
    assert simulation.flower_path() > 0
    # the empty cells are one component: every one of them is reachable from the entrance
    from evoledger.benchmarks.ahc054_rules import _distances, _neighbours

    reach = _distances(_neighbours(size), simulation.trees, simulation.entrance)
    assert sum(1 for d in reach if d >= 0) == size * size - len(case.trees)
    assert generate_case(seed) == case


def _env(seed: int = 1, **config: Any) -> Any:
    return make_treants_forest(**config).make_environment(EpisodeSpec("train", 0, seed))


def test_environment_observations_rewards_and_invalid_actions() -> None:
    env = _env()
    first = env.reset()
    case = generate_case(1)
    assert first["initial"] == {
        "size": case.size,
        "entrance": list(case.entrance),
        "flower": list(case.flower),
        "trees": [list(c) for c in sorted(case.trees)],
    }
    assert first["newly_revealed"] == [list(case.entrance)]
    assert first["turn"] == 0
    step = env.step({"placements": []})
    assert step.reward == 1.0
    assert step.observation["initial"] is None
    assert step.observation["turn"] == 1
    assert step.metrics["turn"] == 1.0
    assert "target" not in json.dumps(step.metrics)
    revealed = {"placements": [list(case.entrance)]}
    bad: Any
    for bad in (None, {"placements": [[0, 0, 0]]}, {"placements": [[True, 1]]}, {"cells": []}, revealed):
        fresh = _env()
        fresh.reset()
        with pytest.raises(InvalidAction):
            fresh.step(bad)


def test_numpy_integers_are_coordinates_as_the_action_space_says() -> None:
    env = _env()
    env.reset()
    case = generate_case(1)
    corner = next(
        c for c in ((case.size - 1, 0), (case.size - 1, case.size - 1)) if c not in (*case.trees, case.flower)
    )
    action = {"placements": [[np.int64(corner[0]), np.int32(corner[1])]]}
    assert make_treants_forest().action_space.contains(action)
    step = env.step(action)
    assert step.observation["placed_treants"] == 1


def test_the_turn_cap_truncates() -> None:
    env = _env(max_episode_steps=3)
    env.reset()
    steps = [env.step({"placements": []}) for _ in range(3)]
    if not any(s.terminated for s in steps):
        assert steps[-1].truncated
        assert steps[-1].metrics["turn_cap"] == 1.0
    assert make_treants_forest().spec.max_episode_steps == MAX_TURNS


def test_feedback_counts_outcomes_and_never_publishes_the_target_order(play_program: PlayProgram) -> None:
    benchmark = make_treants_forest()
    records = play_program(benchmark, benchmark_programs(benchmark).heuristic, count=2)
    failed = EpisodeRecord("train", 7, "invalid_action", 0.0, 1, False, False, failure_message="rejected")
    feedback = benchmark.feedback([*records, failed])
    turns = [r.steps for r in records]
    assert feedback.score == pytest.approx(sum(turns) / 3)
    assert feedback.content["flower_reached"] + feedback.content["cap_hits"] == 2
    assert feedback.content["episodes_with_placements"] == 2
    trace = next(a for a in feedback.artifacts if a.name == "trace.jsonl").data.decode().splitlines()
    assert 0 < len(trace) <= min(sum(turns), TRACE_TRANSITIONS)
    assert "flower_path" in json.loads(trace[0])
    published = json.dumps(feedback.content) + "".join(a.data.decode() for a in feedback.artifacts)
    assert '"target' not in published  # no target field (the how_to_read text may name them)
    for episode in benchmark.episodes("train", seed=0, count=2):
        order = generate_case(episode.seed).target_order
        assert json.dumps([list(c) for c in order[:6]])[1:-1] not in published


def test_a_long_episode_keeps_its_counters_consistent() -> None:
    simulation = ForestSimulation(generate_case(3))
    while not simulation.done and simulation.turn < 300:
        simulation.step([])
    assert simulation.revealed_count == sum(simulation.revealed)
    assert simulation.placed == 0


def test_registered_under_its_family_without_an_extra() -> None:
    from evoledger.kernel.registry import default_registry

    entry = next(e for e in default_registry().entries() if e.name == NAME)
    assert (entry.family, entry.extra) == ("atcoder", None)


def test_open_cells_counts_unrevealed_free_cells_other_than_the_flower() -> None:
    simulation = ForestSimulation(generate_case(2))
    for _ in range(3):
        simulation.step([])
    size = simulation.size
    free = [
        cell
        for cell in range(size * size)
        if not simulation.revealed[cell] and not simulation.trees[cell] and cell != simulation.flower
    ]
    assert simulation.open_cells() == len(free)
    simulation.step([divmod(free[-1], size)])
    assert simulation.open_cells() == len(free) - 1 - sum(1 for c in simulation.newly_revealed if c in free)


def cli_run_replays(tmp_path: Path, name: str, *options: str) -> None:
    command = [sys.executable, "-m", "evoledger", "run", name, *options, "--agent", "hill-climb"]
    command += ["--episode-budget", "2", "--validation-episodes", "1", "--assessment-episodes", "1"]
    command += ["--max-candidates", "1", "--isolation", "local", "--agent-isolation", "local"]
    command += ["--seed", "4", "--record-to", str(tmp_path / "run")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    replay = [sys.executable, "-m", "evoledger", "replay", str(tmp_path / "run"), "--execute", "--isolation", "local"]
    done = subprocess.run(replay, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.catalog  # ~10 s: a Run, its Validation and Assessment, then replay --execute
def test_the_builtin_agent_completes_a_short_run_that_replays(tmp_path: Path) -> None:
    cli_run_replays(tmp_path, NAME, "--set", "max_episode_steps=40")


def test_conforms() -> None:
    check_benchmark(make_treants_forest(), episodes=2).raise_for_problems()


def test_the_heuristic_delays_the_adventurer_longer_than_the_baseline(play_program: PlayProgram) -> None:
    benchmark = make_treants_forest()
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    assert programs.starting == programs.heuristic  # tunable: its params.json is what hill-climb tunes
    baseline = play_program(benchmark, programs.baseline, count=4)
    heuristic = play_program(benchmark, programs.heuristic, count=4)
    assert sum(r.steps for r in heuristic) > 2 * sum(r.steps for r in baseline)
