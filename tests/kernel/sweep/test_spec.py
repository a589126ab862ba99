"""The sweep file: every problem is refused before any Run starts, naming its line, its key and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from evoledger.kernel.sweep.cells import check_cells, expand
from evoledger.kernel.sweep.spec import KeyLines, SweepFileError, read_sweep_file

GOOD = """\
[sweep]
seeds = [0, 1]

[run]
episode_budget = 4
validation = { episodes = 1 }

[[benchmark]]
name = "toy/counter"
set = { n_actions = 4 }

[[agent]]
name = "baseline"
"""


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "study.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _error(tmp_path: Path, text: str | bytes, *, check: bool = False) -> str:
    path = _write(tmp_path, text)
    with pytest.raises(SweepFileError) as caught:
        _read_and_check(path, check=check)
    assert caught.value.exit_code == 2
    return str(caught.value)


def _read_and_check(path: Path, *, check: bool) -> None:
    spec, source = read_sweep_file(path)
    expand(spec, source)
    if check:
        check_cells(spec, source)


def test_a_good_file_reads(tmp_path: Path) -> None:
    spec, text = read_sweep_file(_write(tmp_path, GOOD))
    assert spec.name_or(tmp_path / "study.toml") == "study"
    assert [c.name for c in expand(spec, text)] == ["toy-counter--baseline--seed-0", "toy-counter--baseline--seed-1"]
    check_cells(spec, text)  # toy/counter builds with n_actions=4; baseline is built in


def test_bad_toml_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD + "oops = = 1\n")
    assert "not valid TOML" in message
    assert "line 14" in message


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("[sweep]\nseeds = [0, 1]\n", ""), r"\[sweep\]: missing; add it \(a \[sweep\] table with seeds"),
        (("seeds = [0, 1]", "seed = [0, 1]"), r"line 2: \[sweep\], key seed: unknown key 'seed'; did you mean 'seeds'"),
        (
            ("seeds = [0, 1]", "seeds = [0, 0]"),
            r"line 2: \[sweep\], key seeds: .*seeds repeat \[0\]; list each seed once",
        ),
        (("seeds = [0, 1]", "seeds = []"), r"line 2: \[sweep\], key seeds"),
        (
            ("episode_budget = 4", "episode_budgett = 4"),
            r"line 5: \[run\], key episode_budgett: unknown Run setting "
            r"'episode_budgett'; did you mean 'episode_budget'",
        ),
        (("episode_budget = 4", 'episode_budget = "four"'), r"line 5: \[run\], key episode_budget: .*integer"),
        (("episode_budget = 4", "episode_budget = 0"), r"line 5: \[run\], key episode_budget: .*greater than or equal"),
        (
            ("validation = { episodes = 1 }", "validation = { episode = 1 }"),
            r"line 6: \[run\], key validation.episode: unknown Run setting 'episode'; did you mean 'episodes'",
        ),
        (
            ("episode_budget = 4", "seed = 3"),
            r"line 5: \[run\], key seed: a run table cannot set 'seed'; list the seeds",
        ),
        (("episode_budget = 4", 'agent = { name = "x" }'), r"cannot set 'agent'; name Agents in \[\[agent\]\]"),
        (
            ('name = "baseline"', 'name = "baseline"\noptions = { modle = "x" }'),
            r"line 14: \[\[agent\]\] #1, key options.modle: unknown Agent option 'modle'; did you mean 'model'",
        ),
        (('name = "baseline"', 'name = "baseline"\nlabel = "no/slash"'), r"line 14: \[\[agent\]\] #1, key label"),
        (
            ('[[benchmark]]\nname = "toy/counter"', '[[benchmark]]\nnme = "toy/counter"'),
            r"line 9: \[\[benchmark\]\] #1, key nme: unknown key 'nme'; did you mean 'name'",
        ),
        (("[[agent]]", "[[agents]]"), r"unknown key 'agents'; did you mean 'agent'"),
    ],
)
def test_each_problem_names_its_line_key_and_fix(tmp_path: Path, edit: tuple[str, str], expected: str) -> None:
    old, new = edit
    assert old in GOOD
    message = _error(tmp_path, GOOD.replace(old, new, 1))
    assert re.search(expected, message), message


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace("episode_budget = 4", "episode_budget = 0\nworkerz = 2"))
    assert message.splitlines()[0].endswith("2 problems in the sweep file:")


def test_a_cross_field_rule_is_judged_on_each_cells_merged_settings(tmp_path: Path) -> None:
    text = GOOD.replace(
        "episode_budget = 4",
        'episode_budget = 4\nmax_submissions = 1\nfinish_budget_policy = "require_budget_exhaustion"',
    ).replace("set = { n_actions = 4 }", "set = { n_actions = 4 }\nrun = { max_episodes_per_submission = 2 }")
    message = _error(tmp_path, text)
    assert "cell toy-counter--baseline--seed-0:" in message
    assert "raise max_submissions" in message


def test_two_entries_with_one_label_are_refused(tmp_path: Path) -> None:
    text = GOOD + '\n[[agent]]\nname = "hill-climb"\nlabel = "baseline"\n'
    message = _error(tmp_path, text)
    assert "line 17: [[agent]] #2 and [[agent]] #1 both make the label 'baseline'" in message
    assert 'give one of them its own label = "..."' in message


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ('name = "toy/counter"', 'name = "toy/countr"'),
            r"line 9: \[\[benchmark\]\] #1, key name \(Benchmark 'toy/countr'\): .*Did you mean 'toy/counter'",
        ),
        (
            ("n_actions = 4", "n_actionz = 4"),
            r"line 10: \[\[benchmark\]\] #1, key set .*n_actionz.*did you mean 'n_actions'",
        ),
        (
            ('name = "baseline"', 'name = "no-such-agent"'),
            r"line 13: \[\[agent\]\] #1, key name \(Agent 'no-such-agent'\): unknown agent",
        ),
        (
            ('name = "baseline"', 'name = "codex"\noptions = { executable = "/nonexistent/codex" }'),
            r"line 13: \[\[agent\]\] #1, key name \(Agent 'codex'\): .*/nonexistent/codex",
        ),
    ],
)
def test_benchmarks_and_agents_are_built_before_any_run(tmp_path: Path, edit: tuple[str, str], expected: str) -> None:
    message = _error(tmp_path, GOOD.replace(*edit, 1), check=True)
    assert re.search(expected, message, re.S), message


def test_a_file_that_is_not_utf8_or_too_big_or_missing(tmp_path: Path) -> None:
    assert "is not UTF-8 text" in _error(tmp_path, b"[sweep]\nname = '\xff'\n")
    assert "larger than 1048576 bytes" in _error(tmp_path, "#" * (1 << 20) + "\n")
    with pytest.raises(SweepFileError, match=r"cannot read the sweep file .*; check the path"):
        read_sweep_file(tmp_path / "missing.toml")


def test_key_lines_follow_arrays_of_tables_and_inline_tables() -> None:
    lines = KeyLines(
        '[[benchmark]]\nname = "a"\n[[benchmark]]\nname = "b"\nset = { x = 1, "y" = 2 }\n[benchmark.run]\nworkers = 2\n'
    )
    assert lines.line_of(("benchmark", 0, "name")) == 2
    assert lines.line_of(("benchmark", 1, "name")) == 4
    assert lines.line_of(("benchmark", 1, "set", "y")) == 5
    assert lines.line_of(("benchmark", 1, "run", "workers")) == 7
    assert lines.line_of(("benchmark", 1, "run", "other")) == 6  # the table's header
    assert lines.line_of(("agent", 0)) is None
