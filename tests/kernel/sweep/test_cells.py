"""Expansion: one cell per Benchmark x Agent x seed, in the file's order, with distinct, readable, stable names."""

from __future__ import annotations

import json
import re

import pytest
from evoledger.kernel.sweep.cells import expand, label_of, merged
from evoledger.kernel.sweep.spec import read_sweep_file
from evoledger.ledger.events import SweepCell
from hypothesis import given, settings
from hypothesis import strategies as st

_BENCHMARKS = ["toy/counter", "cartpole", "frozen-lake", "toy-text/taxi", "my.pkg:make"]
_AGENTS = ["baseline", "hill-climb", "codex", "command:python3 my agent.py"]
_CELL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _toml(benchmarks: list[str], agents: list[str], seeds: list[int], budgets: list[int | None]) -> str:
    text = f"[sweep]\nseeds = {seeds}\n[run]\nepisode_budget = 7\nvalidation = {{ episodes = 2 }}\n"
    for n, (name, budget) in enumerate(zip(benchmarks, budgets, strict=True)):
        text += f'[[benchmark]]\nname = {json.dumps(name)}\nlabel = "b{n}"\nset = {{ k = {n} }}\n'
        if budget is not None:
            text += f"run = {{ episode_budget = {budget}, validation = {{ max_candidates = 2 }} }}\n"
    for n, name in enumerate(agents):
        text += f"[[agent]]\nname = {json.dumps(name)}\n" + (f'label = "a{n}"\n' if n % 2 else "")
    return text


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(_BENCHMARKS), min_size=1, max_size=3),
    st.lists(st.sampled_from(_AGENTS), min_size=1, max_size=3, unique=True),
    st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=3, unique=True),
    st.data(),
)
def test_one_cell_per_combination_in_order_with_distinct_names(
    tmp_path_factory: pytest.TempPathFactory,
    benchmarks: list[str],
    agents: list[str],
    seeds: list[int],
    data: st.DataObject,
) -> None:
    budgets = data.draw(st.lists(st.none() | st.integers(1, 50), min_size=len(benchmarks), max_size=len(benchmarks)))
    text = _toml(benchmarks, agents, seeds, budgets)
    path = tmp_path_factory.mktemp("cells") / "study.toml"
    path.write_text(text)
    spec, source = read_sweep_file(path)
    cells = expand(spec, source)
    assert len(cells) == len(benchmarks) * len(agents) * len(seeds)
    assert len({c.name for c in cells}) == len(cells)
    assert all(_CELL_NAME.fullmatch(c.name) for c in cells)
    assert expand(spec, source) == cells  # the same file, the same cells (names included)
    order = [(c.settings["k"], c.agent, c.seed) for c in cells]
    expected = [(b, a, s) for b in range(len(benchmarks)) for a in agents for s in seeds]
    assert order == expected
    for cell in cells:
        budget = budgets[int(str(cell.settings["k"]))]
        assert cell.run["episode_budget"] == (7 if budget is None else budget)  # the Benchmark's run table wins
        # nested tables merge key by key: the sweep's Validation episodes survive the Benchmark's max_candidates
        assert cell.run["validation"] == ({"episodes": 2} if budget is None else {"episodes": 2, "max_candidates": 2})
        assert cell.name.endswith(f"--seed-{cell.seed}")


@given(st.text(max_size=80))
def test_a_label_is_always_a_folder_name_part(name: str) -> None:
    label = label_of(name)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,47}|x", label)
    SweepCell(name=f"{label}--{label}--seed-0", benchmark="b", agent="a", seed=0)  # always a valid cell name


def test_labels_are_readable() -> None:
    assert label_of("toy/counter") == "toy-counter"
    assert label_of("command:python3 my agent.py") == "command-python3-my-agent.py"
    assert label_of("///") == "x"


@given(st.dictionaries(st.sampled_from("abc"), st.integers() | st.dictionaries(st.sampled_from("xy"), st.integers())))
def test_merging_is_left_to_right_and_key_by_key(table: dict[str, object]) -> None:
    assert merged(table) == table
    assert merged({}, table) == merged(table, {}) == table
    later = {"a": 1, "c": {"x": 5}}
    result = merged(table, later)
    assert result["a"] == 1
    before = table.get("c")
    assert result["c"] == ({**before, "x": 5} if isinstance(before, dict) else {"x": 5})
