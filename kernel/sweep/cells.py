"""A sweep file expanded into cells: one Run per Benchmark x Agent x seed, with deterministic, readable names.

A cell is named ``<benchmark>--<agent>--seed-<seed>``: the Benchmark's label (default: its name with ``/`` and any
other character a folder name should not hold made ``-``), the Agent's label likewise, and the seed. The name is the
Run's directory under ``DIR/runs/`` and so its Run id, which every exported ``episode_id`` starts with. Cells come in
the file's order: Benchmark by Benchmark, then Agent by Agent, then seed by seed.

A cell's Run settings are the sweep's ``[run]`` table, then its Benchmark's ``run``, then its Agent's ``run``, merged
key by key (a nested table such as ``validation`` merges too). Each cell's settings are checked as the ``RunConfig``
its Run will record, and every Benchmark and Agent is built once, so a wrong setting is refused before any Run starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from evoledger.kernel.agents.registry import check_agent_program, make_agent
from evoledger.kernel.agents.sandbox import resolve_agent_isolation
from evoledger.kernel.execution import resolve_isolation
from evoledger.kernel.registry import BenchmarkRef, BenchmarkRegistry, default_registry
from evoledger.kernel.run import AgentConfig, RunConfig
from evoledger.kernel.sweep.spec import KeyLines, SweepFile, SweepFileError, describe, run_config_problems
from evoledger.ledger.errors import EvoLedgerError
from evoledger.ledger.events import SweepCell

__all__ = ["cell_name", "check_cells", "expand", "label_of", "merged", "run_config_of"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def label_of(name: str) -> str:
    """A readable folder-name part for a Benchmark or Agent name: ``toy/counter`` -> ``toy-counter``."""
    return _UNSAFE.sub("-", name).strip("-._")[:48] or "x"


def cell_name(benchmark_label: str, agent_label: str, seed: int) -> str:
    """The cell's name (its Run's directory under ``runs/``)."""
    return f"{benchmark_label}--{agent_label}--seed-{seed}"


def merged(*tables: Mapping[str, Any]) -> dict[str, Any]:
    """``tables`` merged left to right, nested tables key by key (a later value wins)."""
    out: dict[str, Any] = {}
    for table in tables:
        for key, value in table.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                out[key] = merged(out[key], value)
            else:
                out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def _labels(lines: KeyLines, kind: str, entries: Sequence[Any]) -> list[str]:
    labels = [entry.label or label_of(entry.name) for entry in entries]
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        if label in seen:
            first, here = seen[label], i
            line = lines.line_of((kind, here, "label" if entries[here].label else "name"))
            at = f"line {line}: " if line is not None else ""
            raise SweepFileError(
                f"{at}{describe((kind, here))} and {describe((kind, first))} both make the label {label!r}, so their "
                f'cells would share run directories; give one of them its own label = "..."'
            )
        seen[label] = i
    return labels


def expand(spec: SweepFile, text: str = "") -> tuple[SweepCell, ...]:
    """Every cell of ``spec``, in order (``text``: the file's text, to name lines in errors)."""
    lines = KeyLines(text)
    benchmarks = _labels(lines, "benchmark", spec.benchmark)
    agents = _labels(lines, "agent", spec.agent)
    cells: list[SweepCell] = []
    problems: list[str] = []
    for b_label, bench in zip(benchmarks, spec.benchmark, strict=True):
        for a_label, agent in zip(agents, spec.agent, strict=True):
            run = merged(spec.run, bench.run, agent.run)
            for seed in spec.sweep.seeds:
                cell = SweepCell(
                    name=cell_name(b_label, a_label, seed),
                    benchmark=bench.name,
                    settings=dict(bench.settings),
                    agent=agent.name,
                    agent_options=dict(agent.options),
                    seed=seed,
                    run=run,
                )
                problems.extend(_cell_problems(lines, cell))
                cells.append(cell)
    if problems:
        shown = "\n".join(f"  {p}" for p in dict.fromkeys(problems))
        raise SweepFileError(f"the sweep's cells have invalid Run settings:\n{shown}")
    return tuple(cells)


def run_config_of(cell: SweepCell, *, workers: int | None = None) -> RunConfig:
    """The ``RunConfig`` ``cell``'s Run records (``workers``: the default when the sweep file sets none)."""
    values = dict(cell.run)
    if workers is not None and "workers" not in values:
        values["workers"] = workers
    return RunConfig.model_validate(
        {
            **values,
            "benchmark": BenchmarkRef(name=cell.benchmark, config=dict(cell.settings)),
            "seed": cell.seed,
            "agent": {"name": cell.agent, **cell.agent_options},
        }
    )


def _cell_problems(lines: KeyLines, cell: SweepCell) -> Iterator[str]:
    """A cell's merged settings as its ``RunConfig`` (a cross-field rule such as require_budget_exhaustion)."""
    for problem in run_config_problems(lines, ("run",), cell.run):
        yield f"cell {cell.name}: {problem}"
    try:
        run_config_of(cell)
    except EvoLedgerError as exc:
        yield f"cell {cell.name}: {exc}"
    except ValueError as exc:  # a pydantic error of the axes' values (each table was checked alone already)
        yield f"cell {cell.name}: {exc}"


def check_cells(spec: SweepFile, text: str, registry: BenchmarkRegistry | None = None) -> None:
    """Build every Benchmark with its settings and every Agent with its options once, and resolve each isolation: a
    missing extra, an unknown name, a wrong ``--set`` key, an Agent program that is not installed or a bubblewrap
    that cannot work here is refused before any Run starts, naming its table."""
    lines = KeyLines(text)
    for prefix, table in (
        (("run",), spec.run),
        *((("benchmark", i, "run"), b.run) for i, b in enumerate(spec.benchmark)),
    ):
        _check_isolation(lines, prefix, table)
    for i, agent in enumerate(spec.agent):
        _check_isolation(lines, ("agent", i, "run"), agent.run)
    found = registry or default_registry()
    for i, bench in enumerate(spec.benchmark):
        where: tuple[str | int, ...] = ("benchmark", i, "name")
        try:
            found.factory(bench.name)  # the name, its extra
            where = ("benchmark", i, "set")
            found.make(bench.name, dict(bench.settings))
        except EvoLedgerError as exc:
            raise SweepFileError(f"{_at(lines, where)} (Benchmark {bench.name!r}): {exc}") from None
    for i, agent in enumerate(spec.agent):
        try:
            config = AgentConfig.model_validate({"name": agent.name, **agent.options})
            adapter = make_agent(config.name, config.adapter_options())
            check_agent_program(adapter, model=config.model, extra_args=config.args)
        except EvoLedgerError as exc:
            raise SweepFileError(f"{_at(lines, ('agent', i, 'name'))} (Agent {agent.name!r}): {exc}") from None


def _check_isolation(lines: KeyLines, prefix: tuple[str | int, ...], table: Mapping[str, Any]) -> None:
    checks = (("isolation", resolve_isolation), ("agent_isolation", resolve_agent_isolation))
    for key, resolve in checks:
        value = table.get(key)
        if isinstance(value, str):
            try:
                resolve(value)
            except EvoLedgerError as exc:
                raise SweepFileError(f"{_at(lines, (*prefix, key))}: {exc}") from None


def _at(lines: KeyLines, loc: tuple[str | int, ...]) -> str:
    line = lines.line_of(loc)
    return f"line {line}: {describe(loc)}" if line is not None else describe(loc)
