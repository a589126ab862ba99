"""The sweep file: TOML read with ``tomllib``, checked with pydantic; every error names its line, its key and the fix.

A sweep file names Benchmarks (with their ``--set`` settings), Agents (with their ``--agent-option`` values) and
seeds, and the Run settings every cell shares (any ``RunConfig`` field, as ``evoledger run`` takes it as a flag)::

    [sweep]
    name = "toy-study"            # optional; default: the file's name
    seeds = [0, 1]                # one Run per seed (each derives its Run's key: reproducible, and predictable)

    [run]                         # RunConfig fields for every cell: evoledger run's flags, as TOML keys
    episode_budget = 8
    validation = { episodes = 2 }
    assessment = { episodes = 2 }

    [[benchmark]]
    name = "toy/counter"
    set = { high = 20 }           # its --set settings
    run = { episode_budget = 12 } # optional: Run settings for this Benchmark's cells only

    [[agent]]
    name = "hill-climb"
    [[agent]]
    name = "claude-code"
    label = "claude-opus"         # the cell names' part for it (default: from its name)
    options = { model = "opus", effort = "high" }

The file expands to one cell per Benchmark x Agent x seed (``kernel.sweep.cells``).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final

from evoledger.kernel.run import AgentConfig, RunConfig
from evoledger.ledger.errors import ConfigError, InputError
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints, ValidationError, field_validator
from pydantic_core import ErrorDetails

__all__ = ["RESERVED_RUN_KEYS", "AgentEntry", "BenchmarkEntry", "SweepFile", "SweepFileError", "read_sweep_file"]

MAX_SWEEP_BYTES: Final = 1 << 20
"""A sweep file larger than this is refused (it is read whole)."""

Label = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$")]
"""A Benchmark's or an Agent's part of a cell name: letters, digits, ``.``, ``_``, ``-``; at most 48 characters."""

RESERVED_RUN_KEYS: Final = {
    "benchmark": "name Benchmarks in [[benchmark]] tables (name = ..., set = {...})",
    "seed": "list the seeds in [sweep] seeds = [...]",
    "agent": "name Agents in [[agent]] tables (name = ..., options = {...})",
}
"""Run settings a ``run`` table may not hold, since the sweep's axes give them, and where they go instead."""


class SweepFileError(InputError):
    """The sweep file cannot be read or is not a valid sweep (each problem: its line, key and fix)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=False)


class SweepHeader(_Strict):
    """The ``[sweep]`` table."""

    name: Label | None = None
    seeds: list[Annotated[int, Field(ge=0, lt=2**63)]] = Field(min_length=1, max_length=10_000)

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, seeds: list[int]) -> list[int]:
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ValueError(f"seeds repeat {repeated}; list each seed once")
        return seeds


class BenchmarkEntry(_Strict):
    """One ``[[benchmark]]`` table: a Benchmark name, its ``--set`` settings, a label, its own Run settings."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    settings: dict[str, JsonValue] = Field(default_factory=dict, alias="set")
    label: Label | None = None
    run: dict[str, Any] = Field(default_factory=dict)


class AgentEntry(_Strict):
    """One ``[[agent]]`` table: an Agent name, its ``--agent-option`` values, a label, its own Run settings."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    options: dict[str, JsonValue] = Field(default_factory=dict)
    label: Label | None = None
    run: dict[str, Any] = Field(default_factory=dict)


class SweepFile(_Strict):
    """A whole sweep file, checked; ``path`` and ``text`` are where it came from."""

    sweep: SweepHeader
    run: dict[str, Any] = Field(default_factory=dict)
    benchmark: list[BenchmarkEntry] = Field(min_length=1, max_length=1000)
    agent: list[AgentEntry] = Field(min_length=1, max_length=1000)

    def name_or(self, path: Path) -> str:
        """The sweep's name: ``[sweep] name``, else the file's stem made into a label."""
        if self.sweep.name is not None:
            return self.sweep.name
        return re.sub(r"[^A-Za-z0-9._-]", "-", path.stem).lstrip("-._")[:48] or "sweep"


_AGENT_OPTION_KEYS: Final = tuple(sorted(set(AgentConfig.model_fields) - {"name"}))
"""The keys an ``[[agent]]`` table's ``options`` takes: every ``AgentConfig`` field but its name."""

_MAX_PROBLEMS: Final = 20


def read_sweep_file(path: Path) -> tuple[SweepFile, str]:
    """The checked sweep file at ``path`` and its text; :class:`SweepFileError` lists every problem found."""
    try:
        raw = path.read_bytes()[: MAX_SWEEP_BYTES + 1]
    except OSError as exc:
        raise SweepFileError(f"cannot read the sweep file {path}: {exc.strerror or exc}; check the path") from None
    if len(raw) > MAX_SWEEP_BYTES:
        raise SweepFileError(f"the sweep file {path} is larger than {MAX_SWEEP_BYTES} bytes; split it into sweeps")
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise SweepFileError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepFileError(f"{path}: not valid TOML: {exc}; fix the TOML syntax there") from None
    lines = KeyLines(text)
    try:
        spec = SweepFile.model_validate(data)
    except ValidationError as exc:
        problems = [_problem(lines, e) for e in exc.errors()]
        run = data.get("run")
        if isinstance(run, dict):  # its own problems too, so that one reading lists every problem
            problems += _run_table_problems(lines, ("run",), run)
        raise SweepFileError(_listed(path, problems)) from None
    problems = [*_run_tables_problems(lines, spec), *_option_problems(lines, spec)]
    if problems:
        raise SweepFileError(_listed(path, problems))
    return spec, text


def _listed(path: Path, problems: Sequence[str]) -> str:
    shown = list(problems[:_MAX_PROBLEMS])
    more = len(problems) - len(shown)
    tail = [f"... and {more} more"] if more > 0 else []
    head = f"{path}: {len(problems)} problem{'s' if len(problems) != 1 else ''} in the sweep file:"
    return "\n".join([head, *(f"  {p}" for p in shown), *tail])


def _where(lines: KeyLines, loc: Sequence[str | int]) -> str:
    line = lines.line_of(loc)
    return f"line {line}: {describe(loc)}" if line is not None else describe(loc)


def describe(loc: Sequence[str | int]) -> str:
    """A location in a sweep file, in its own words: ``[[benchmark]] #2, key run.episode_budget``."""
    parts = list(loc)
    if len(parts) >= 2 and parts[0] in ("benchmark", "agent") and isinstance(parts[1], int):
        table = f"[[{parts[0]}]] #{parts[1] + 1}"
        rest = parts[2:]
    elif parts and parts[0] in ("sweep", "run"):
        table, rest = f"[{parts[0]}]", parts[1:]
    else:
        table, rest = "the top level", parts
    if not rest:
        return table
    return f"{table}, key {'.'.join(str(p) for p in rest)}"


def _problem(lines: KeyLines, error: ErrorDetails) -> str:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1])
        valid = _valid_keys(parent)
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"{_where(lines, loc)}: unknown key {key!r}; {hint}valid keys here: {', '.join(valid)}"
    if kind == "missing":
        return (
            f"{_where(lines, loc)}: missing; add it ({_MISSING_HINTS.get(str(loc[-1]), 'see evoledger sweep --help')})"
        )
    return f"{_where(lines, loc)}: {error['msg']} (got {error.get('input')!r})"


_MISSING_HINTS: Final = {
    "sweep": "a [sweep] table with seeds = [0, 1, ...]",
    "seeds": "seeds = [0, 1, ...] in [sweep]",
    "benchmark": 'at least one [[benchmark]] table with name = "..."',
    "agent": 'at least one [[agent]] table with name = "..."',
    "name": 'name = "..."',
}


def _valid_keys(parent: Sequence[str | int]) -> list[str]:
    tables: dict[tuple[str | int, ...], type[BaseModel]] = {(): SweepFile, ("sweep",): SweepHeader}
    if len(parent) == 2 and parent[0] in ("benchmark", "agent"):
        model: type[BaseModel] | None = BenchmarkEntry if parent[0] == "benchmark" else AgentEntry
    else:
        model = tables.get(tuple(parent))
    if model is None:
        return []
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _run_tables(spec: SweepFile) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    yield ("run",), spec.run
    for i, b in enumerate(spec.benchmark):
        yield ("benchmark", i, "run"), b.run
    for i, a in enumerate(spec.agent):
        yield ("agent", i, "run"), a.run


def _run_tables_problems(lines: KeyLines, spec: SweepFile) -> Iterator[str]:
    for prefix, table in _run_tables(spec):
        yield from _run_table_problems(lines, prefix, table)


def _run_table_problems(lines: KeyLines, prefix: tuple[str | int, ...], table: Mapping[str, Any]) -> list[str]:
    """A ``run`` table's own problems: a key the sweep's axes give, an unknown Run setting, a wrong value."""
    problems = [
        f"{_where(lines, (*prefix, key))}: a run table cannot set {key!r}; {fix}"
        for key, fix in RESERVED_RUN_KEYS.items()
        if key in table
    ]
    rest = {k: v for k, v in table.items() if k not in RESERVED_RUN_KEYS}
    return [*problems, *run_config_problems(lines, prefix, rest)]


def run_config_problems(lines: KeyLines, prefix: tuple[str | int, ...], values: Mapping[str, Any]) -> Iterator[str]:
    """The problems of ``values`` as ``RunConfig`` fields, each located at ``prefix`` + its key."""
    try:
        RunConfig.model_validate(values)
    except ValidationError as exc:
        for error in exc.errors():
            loc = (*prefix, *error["loc"])
            if error["type"] == "extra_forbidden":
                key = str(error["loc"][-1])
                valid = _run_keys(error["loc"][:-1])
                close = difflib.get_close_matches(key, valid, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                yield f"{_where(lines, loc)}: unknown Run setting {key!r}; {hint}valid keys here: {', '.join(valid)}"
            else:
                yield f"{_where(lines, loc)}: {error['msg']} (got {error.get('input')!r})"
    except ConfigError:  # a cross-field rule: judged on each cell's merged settings (kernel.sweep.cells)
        return


def _run_keys(parent: Sequence[str | int]) -> list[str]:
    model: type[BaseModel] = RunConfig
    for part in parent:
        field = model.model_fields.get(str(part))
        annotation = None if field is None else field.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return sorted(k for k in model.model_fields if not (model is RunConfig and k in RESERVED_RUN_KEYS))


def _option_problems(lines: KeyLines, spec: SweepFile) -> Iterator[str]:
    for i, agent in enumerate(spec.agent):
        unknown = [k for k in agent.options if k not in _AGENT_OPTION_KEYS]
        for key in unknown:
            close = difflib.get_close_matches(key, _AGENT_OPTION_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            yield (
                f"{_where(lines, ('agent', i, 'options', key))}: unknown Agent option {key!r}; {hint}valid options: "
                f"{', '.join(_AGENT_OPTION_KEYS)}"
            )
        if unknown:
            continue
        try:
            AgentConfig.model_validate({"name": agent.name, **agent.options})
        except ValidationError as exc:
            for error in exc.errors():
                loc = ("agent", i, "options", *error["loc"])
                yield f"{_where(lines, loc)}: {error['msg']} (got {error.get('input')!r})"


_HEADER: Final = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY: Final = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_INLINE_KEY: Final = re.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=""")


def _key_parts(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in re.split(r"\.(?=(?:[^\"']*[\"'][^\"']*[\"'])*[^\"']*$)", text))


class KeyLines:
    """Where each key of a TOML text is written (1-based lines), to name the line of a problem.

    A best-effort reading of the common shapes (``[table]``, ``[[array]]``, ``key = value``, dotted keys, one-line
    inline tables); what it cannot place falls back to its table's header line, or to no line at all.
    """

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str | int, ...], int] = {}
        counts: dict[tuple[str | int, ...], int] = {}
        table: tuple[str | int, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            header = _HEADER.match(line)
            if header is not None and "=" not in line.split("]")[0]:
                table = self._table(_key_parts(header.group(2)), counts, array=header.group(1) == "[[")
                self._lines.setdefault(table, number)
                continue
            key = _KEY.match(line)
            if key is None:
                continue
            path = (*table, *_key_parts(key.group(1)))
            self._lines.setdefault(path, number)
            rest = line[key.end() :]
            if rest.lstrip().startswith("{"):
                for inner in _INLINE_KEY.finditer(rest):
                    self._lines.setdefault((*path, inner.group(1).strip("\"'")), number)

    def _table(
        self, parts: tuple[str, ...], counts: dict[tuple[str | int, ...], int], *, array: bool
    ) -> tuple[str | int, ...]:
        resolved: tuple[str | int, ...] = ()
        for n, part in enumerate(parts):
            resolved = (*resolved, part)
            last = n == len(parts) - 1
            if last and array:
                counts[resolved] = counts.get(resolved, -1) + 1
                resolved = (*resolved, counts[resolved])
            elif resolved in counts:  # inside the latest element of an array of tables
                resolved = (*resolved, counts[resolved])
        return resolved

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The line of ``loc`` or of its nearest enclosing key or table written in the text."""
        path = tuple(loc)
        while path:
            if path in self._lines:
                return self._lines[path]
            path = path[:-1]
        return None
