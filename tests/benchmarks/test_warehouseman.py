"""CodeChef WAREHOUS: the generator against hashlib, the simulator and cost on a hand-made case, the Environment's
invalid Actions, the baseline's validity over sizes and seeds, and the Feedback (no arrivals, no strings)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.contest_stream import CaseStream
from evoledger.benchmarks.warehouseman import DIAGNOSTIC_EPISODES, NAME, make_warehouseman
from evoledger.benchmarks.warehouseman_rules import (
    FAILURE_COST,
    GENERATOR_DOMAIN,
    INSTRUCTION_LIMIT,
    InvalidInstructions,
    WarehouseCase,
    execute,
    generate_case,
    normalized_cost,
)
from evoledger.kernel.authoring import EpisodeRecord, EpisodeSpec, InvalidAction, benchmark_programs, check_benchmark
from evoledger.tests.benchmarks.conftest import PlayProgram
from evoledger.tests.benchmarks.test_ahc054 import cli_run_replays
from evoledger.tests.support.program_module import load_program_module

# A hand-made 6x6 case. The cells (0,0) -> (1,0) .. (5,0) -> columns 1-5 of rows 1-5 in a vertical snake ->
# (0,5) .. (0,1) form a Hamiltonian cycle P[0..35] through the entrance P[0] = (0,0); WALK[k] is the move from
# P[k] to P[k+1] (written out by hand). Shipment 1 arrives first and goes to P[35] = (0,1), next to the entrance;
# then shipments 35, 34, ..., 2 arrive and shipment i goes to P[i-1], walking P[1..i-2] and back.
WALK = "SSSSS" + "E" + "NNNN" + "E" + "SSSS" + "E" + "NNNN" + "E" + "SSSS" + "E" + "NNNN" + "N" + "WWWW"
BACK = {"N": "S", "S": "N", "E": "W", "W": "E"}
HAND_CASE = WarehouseCase(6, 6, (1, *range(35, 1, -1)))


def _hand_solution() -> str:
    out = ["P", "UE"]  # shipment 1 into (0,1)
    for i in range(35, 1, -1):  # shipment i into P[i-1]: walk i-2 cells, unload, walk back
        there = WALK[: i - 2]
        out += ["P", there, "U" + WALK[i - 2], "".join(BACK[d] for d in reversed(there))]
    out += ["LE", "D"]  # shipment 1 from (0,1)
    for i in range(2, 36):  # shipment i from P[i-1]
        there = WALK[: i - 2]
        out += [there, "L" + WALK[i - 2], "".join(BACK[d] for d in reversed(there)), "D"]
    return "".join(out)


def test_the_hand_made_walk_is_a_cycle_through_the_entrance() -> None:
    assert len(WALK) == 35
    cells = [(0, 0)]
    for d in WALK:
        r, c = cells[-1]
        cells.append((r + {"N": -1, "S": 1}.get(d, 0), c + {"W": -1, "E": 1}.get(d, 0)))
    assert sorted(cells) == [(r, c) for r in range(6) for c in range(6)]
    assert cells[-1] == (0, 1)


def test_hand_made_6x6_solution_costs_what_was_computed_by_hand() -> None:
    # Storage: 3 characters for shipment 1, 2(i-2)+3 for shipment i = 35..2; retrieval the same again:
    # 6 + 2 * (2 * (0 + 1 + ... + 33) + 3 * 34) = 6 + 2 * (1122 + 102) = 2454 characters.
    solution = _hand_solution()
    assert len(solution) == 2454
    operations = execute(HAND_CASE, solution)
    assert (operations.picks, operations.deliveries, operations.lifts, operations.unloads) == (35, 35, 35, 35)
    assert operations.moves == 2454 - 35 * 2 - 35 * 2 * 2
    assert operations.relocations == 0
    # (2454 + 2) / (6 + 6 - 1) - 2 * 36 + 20 = 2456 / 11 - 52 = 171.2727...
    assert normalized_cost(len(solution), 6, 6) == pytest.approx(2456 / 11 - 52)
    assert normalized_cost(len(solution), 6, 6) == pytest.approx(171.272727, abs=1e-6)


@pytest.mark.parametrize(
    ("instructions", "fault"),
    [
        ("PUE" + "X", "not an instruction"),
        ("PUEN", "cannot move N"),  # off the grid
        ("PUEE", "cannot move E"),  # (0,1) holds shipment 1
        ("PUEPUE", "cannot unload"),  # (0,1) is full
        ("PUEPUSS", "cannot move S"),  # carrying is allowed, but (1,0) now holds shipment 35
        ("PUELE" + "D", "cannot deliver"),  # shipments still to arrive
        ("PUES" + "P", "cannot pick"),  # away from the entrance
        ("LE", "cannot lift"),  # nothing stored there
        ("PU", "must be followed"),
        ("", "0 of 35 shipments"),
    ],
)
def test_invalid_instructions_are_refused_with_the_first_fault(instructions: str, fault: str) -> None:
    with pytest.raises(InvalidInstructions, match=fault):
        execute(HAND_CASE, instructions)


def test_delivering_out_of_order_and_ending_away_from_the_entrance_are_invalid() -> None:
    solution = _hand_solution()
    swapped = solution.replace("LED", "LSD", 1)  # the first retrieval takes shipment 2 from (1,0) instead of 1
    assert swapped != solution
    with pytest.raises(InvalidInstructions, match="cannot deliver"):
        execute(HAND_CASE, swapped)
    with pytest.raises(InvalidInstructions, match="forklift at"):
        execute(HAND_CASE, solution + "S")
    with pytest.raises(InvalidInstructions, match="limit"):
        execute(HAND_CASE, "N" * (INSTRUCTION_LIMIT + 1))


def _draw(seed: int, counter: int) -> int:
    message = GENERATOR_DOMAIN + seed.to_bytes(8, "big") + counter.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def test_generator_draws_the_size_from_the_stream_and_a_valid_arrival_order() -> None:
    for seed in range(6):
        case = generate_case(seed)
        # below(15) takes the first draw mod 15 unless it is in the top 2**64 mod 15 values (never here)
        assert (case.rows, case.columns) == (6 + _draw(seed, 0) % 15, 6 + _draw(seed, 1) % 15)
        assert sorted(case.arrivals) == list(range(1, case.rows * case.columns))
        assert case.arrivals[-1] != 1
        assert generate_case(seed) == case
    assert len({generate_case(s).arrivals for s in range(6)}) == 6


def _env(seed: int = 0) -> Any:
    return make_warehouseman().make_environment(EpisodeSpec("train", 0, seed))


def test_environment_scores_a_valid_string_and_refuses_anything_else() -> None:
    env = _env()
    observation = env.reset()
    assert set(observation) == {"rows", "columns", "arrivals", "instruction_limit"}
    case = WarehouseCase(observation["rows"], observation["columns"], tuple(observation["arrivals"]))
    assert case == generate_case(0)
    for bad in (None, ["N"], "PUE", "N" * (INSTRUCTION_LIMIT + 1)):
        fresh = _env()
        fresh.reset()
        with pytest.raises(InvalidAction):
            fresh.step(bad)
    solution = env.legal_action(None)
    step = env.step(solution)
    assert step.terminated
    assert not step.truncated
    assert step.reward == normalized_cost(len(solution), case.rows, case.columns)
    assert step.metrics["characters"] == len(solution)


@pytest.mark.parametrize("size", [(6, 6), (6, 20), (20, 6), (7, 9), (11, 13)])
def test_baseline_is_valid_on_corner_sizes(size: tuple[int, int]) -> None:
    _check_baseline_sizes([size], seeds=range(2))


@pytest.mark.catalog
def test_baseline_is_valid_for_every_size_and_many_seeds() -> None:
    sizes = [(r, c) for r in range(6, 21) for c in range(6, 21)]
    _check_baseline_sizes(sizes, seeds=range(3))
    solve = load_program_module(benchmark_programs(make_warehouseman()).baseline).solve
    for seed in range(40):
        case = generate_case(seed)
        execute(case, solve(case.rows, case.columns, list(case.arrivals)))


def _check_baseline_sizes(sizes: list[tuple[int, int]], *, seeds: range) -> None:
    solve = load_program_module(benchmark_programs(make_warehouseman()).baseline).solve
    for rows, columns in sizes:
        for seed in seeds:
            count = rows * columns - 1
            order = list(range(1, count + 1))
            CaseStream(b"warehouseman-test\0", seed).shuffle(order)
            if order[-1] == 1:
                order[-1], order[0] = order[0], order[-1]
            case = WarehouseCase(rows, columns, tuple(order))
            solution = solve(rows, columns, order)
            operations = execute(case, solution)  # raises unless valid
            assert operations.deliveries == count
            assert len(solution) <= INSTRUCTION_LIMIT


def test_feedback_scores_the_mean_cost_and_publishes_no_arrivals_or_strings(play_program: PlayProgram) -> None:
    benchmark = make_warehouseman()
    records = play_program(benchmark, benchmark_programs(benchmark).heuristic, count=2)
    failed = EpisodeRecord("train", 9, "invalid_action", 0.0, 1, False, False, failure_message="not a valid solution")
    feedback = benchmark.feedback([*records, failed])
    costs = [r.episode_return for r in records]
    assert feedback.score == pytest.approx((sum(costs) + FAILURE_COST) / 3)
    assert benchmark.spec.score_direction == "minimize"
    assert feedback.content["statuses"] == {"invalid_action": 1, "ok": 2}
    assert feedback.content["solved"] == 2
    assert feedback.content["mean_characters_per_shipment"] > 6
    assert feedback.content["failures"][0]["message"] == "not a valid solution"
    assert [a.name for a in feedback.artifacts] == ["diagnostics.jsonl"]
    diagnostics = next(a for a in feedback.artifacts if a.name == "diagnostics.jsonl").data.decode()
    lines = [json.loads(line) for line in diagnostics.splitlines()]
    assert [line["status"] for line in lines] == ["ok", "ok", "invalid_action"]
    assert lines[2]["cost"] == FAILURE_COST
    published = json.dumps(feedback.content) + "".join(a.data.decode() for a in feedback.artifacts)
    arrivals = records[0].trajectory.observations[0]["arrivals"] if records[0].trajectory else []
    assert json.dumps(arrivals[:12])[1:-1] not in published
    assert "PUE" not in published
    assert "LN" not in published
    many = benchmark.feedback([failed] * (DIAGNOSTIC_EPISODES + 5))
    lines_kept = next(a for a in many.artifacts if a.name == "diagnostics.jsonl").data.count(b"\n")
    assert lines_kept == DIAGNOSTIC_EPISODES


def test_registered_under_its_family_without_an_extra() -> None:
    from evoledger.kernel.registry import default_registry

    entry = next(e for e in default_registry().entries() if e.name == NAME)
    assert (entry.family, entry.extra) == ("codechef", None)


@pytest.mark.catalog  # ~10 s; the one act() solves the whole case, so it gets more than the default 2 s
def test_the_builtin_agent_completes_a_short_run_that_replays(tmp_path: Path) -> None:
    cli_run_replays(tmp_path, NAME, "--act-timeout", "60")


def test_conforms() -> None:
    check_benchmark(make_warehouseman(), episodes=2).raise_for_problems()


def test_the_heuristic_writes_shorter_solutions_than_the_baseline(play_program: PlayProgram) -> None:
    benchmark = make_warehouseman()
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    baseline = play_program(benchmark, programs.baseline, count=3)
    heuristic = play_program(benchmark, programs.heuristic, count=3)
    for ours, theirs in zip(heuristic, baseline, strict=True):
        assert ours.status == theirs.status == "ok"
        assert ours.episode_return < theirs.episode_return  # cost: lower is better
