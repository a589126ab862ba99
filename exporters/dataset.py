"""``export_dataset``: Runs -> a HuggingFace-style rollout dataset (or a Minari dataset) on disk.

This module imports no optional package at import time: pyarrow (and minari) are imported when an
export runs, and their absence is an :class:`InputError` naming the extra to install. The CLI loads
this function by import string (``evoledger.exporters.dataset:export_dataset``).

Steps:

1. check the options and the output directory (refused if not empty, unless ``overwrite`` and it
   holds an earlier export);
2. open every Run read-only and read its small facts (one pass over the non-Episode Events);
3. decide how observations and actions are stored: typed when every Run declares the same space and
   the space allows it, else JSON text;
4. stream each config's rows from the logs into Parquet in a staging directory, write the card, and
   move the staging directory into place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evoledger import __version__
from evoledger.exporters.options import ExportOptions
from evoledger.exporters.output_dir import (
    CARD_NAME,
    check_output_dir,
    discard,
    make_parents,
    publish,
    remove_parents,
    staging_dir,
)
from evoledger.exporters.report import ConfigReport, ExportReport, RunReport
from evoledger.exporters.requirements import require_minari, require_pyarrow
from evoledger.exporters.runs import RunFacts, open_run, read_run_facts
from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import LEDGER_FORMAT_VERSION, BenchmarkIdentity
from evoledger.ledger.head import Head
from evoledger.ledger.signature_check import check_signature
from evoledger.ledger.store import Ledger

if TYPE_CHECKING:
    from evoledger.exporters.minari_export import MinariResult
    from evoledger.exporters.spaces import ValueEncoding

__all__ = ["export_dataset"]


def _run_report(facts: RunFacts) -> RunReport:
    signature = check_signature(facts.path, log_head=Head(facts.head_hash, facts.event_count))
    return RunReport(
        run_id=facts.run_id,
        path=str(facts.path),
        head_hash=facts.head_hash,
        events=facts.event_count,
        format_version=facts.created.format_version if facts.created is not None else None,
        benchmark=facts.benchmark_id,
        benchmark_params_hash=facts.benchmark.params_hash,
        created_by=facts.created_by,
        end_reason=facts.ended.reason if facts.ended is not None else None,
        selected=facts.selected,
        assessment_score=facts.assessment_score(),
        submissions=len(facts.submissions),
        signer=signature.fingerprint,
        signature=signature.status,
        record="run" if facts.evaluation is None else "evaluation",
    )


def _check_distinct(facts: Sequence[RunFacts]) -> None:
    seen: dict[str, RunFacts] = {}
    for item in facts:
        other = seen.get(item.run_id)
        if other is not None:
            if other.head_hash == item.head_hash:
                raise ConfigError(f"Run {item.run_id} is given twice ({other.path} and {item.path}); name it once")
            raise ConfigError(
                f"{other.path} and {item.path} are different Runs with the same run id {item.run_id!r}, so their "
                "rows could not be told apart; export them into separate datasets"
            )
        seen[item.run_id] = item


_EPISODE_CONFIGS: Final = ("steps", "episodes")


def _for_records(options: ExportOptions, facts: Sequence[RunFacts], *, asked: bool) -> ExportOptions:
    """Evaluation records alone have no Submissions or Agent session: only their Episode configs are written."""
    if any(item.evaluation is None for item in facts):
        return options
    kept = tuple(name for name in options.configs if name in _EPISODE_CONFIGS)
    if not kept:
        raise ConfigError(
            f"{', '.join(str(item.path) for item in facts)}: evaluation records (from `evoledger evaluate "
            f"--record-to`) have no Submissions or Agent session, so --config {','.join(options.configs)} has "
            "nothing to export; pass --config steps or --config episodes"
        )
    return options if asked else replace(options, configs=kept)


def _encodings(facts: Sequence[RunFacts], json_spaces: bool) -> tuple[ValueEncoding, ValueEncoding]:
    from evoledger.exporters.spaces import JSON_ENCODING, ValueEncoding, encoding_for

    if json_spaces:
        return JSON_ENCODING, JSON_ENCODING

    def unified(what: str, spaces: list[Any]) -> ValueEncoding:
        encodings = {encoding_for(space) for space in spaces}
        if len(encodings) > 1:
            labels = sorted(e.label() for e in encodings)
            return ValueEncoding("json", reason=f"the Runs' {what} spaces need different columns ({', '.join(labels)})")
        return encodings.pop()

    return (
        unified("observation", [f.observation_space for f in facts]),
        unified("action", [f.action_space for f in facts]),
    )


def _spaces(facts: Sequence[RunFacts]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in facts:
        if item.benchmark_id not in out and item.spec is not None:
            out[item.benchmark_id] = {
                "observation_space": item.observation_space,
                "action_space": item.action_space,
            }
    return out


def export_dataset(
    run_dirs: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    configs: Iterable[str] | None = None,
    visibility: str = "public",
    output_format: str = "hf",
    reward: str = "assessment",
    overwrite: bool = False,
    json_spaces: bool = False,
    row_group_rows: int | None = None,
    minari_dataset_id: str | None = None,
    spec_for: Callable[[BenchmarkIdentity], Mapping[str, Any] | None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ExportReport:
    """Export the Runs in ``run_dirs`` into the dataset directory ``out``.

    ``configs`` picks among ``steps``, ``episodes``, ``submissions``, ``messages`` (default: all);
    ``visibility`` is ``public`` (what the Agent saw, plus outcome labels) or ``all`` (adds the
    Validation and Assessment Episodes); ``output_format`` is ``hf`` (Parquet + dataset card) or
    ``minari`` (a Minari dataset of the steps of one Benchmark); ``reward`` is the messages' final
    reward: ``assessment``, ``validation`` or ``best_public``. ``json_spaces`` stores observations and
    actions as JSON text even when their spaces allow typed columns. ``spec_for`` gives the public
    Benchmark spec of a record that holds none (an ``evoledger evaluate`` record): it is called with the
    recorded Benchmark identity and returns the spec, or ``None`` when it cannot vouch for one.
    ``on_progress(config, done, total)`` follows the writing, each config in its unit with a total known before
    it starts: Episodes for ``steps`` and ``episodes`` (and ``minari``, the Minari dataset), rows for
    ``submissions`` (Submissions) and ``messages`` (Runs); it is called once per Episode or batch, never per step.

    >>> export_dataset(["runs/cartpole-0"], "datasets/cartpole", configs=["steps"])  # doctest: +SKIP
    """
    options = ExportOptions.of(
        configs=configs,
        visibility=visibility,
        reward=reward,
        output_format=output_format,
        json_spaces=json_spaces,
        row_group_rows=row_group_rows,
    )
    dirs = [Path(d) for d in ([run_dirs] if isinstance(run_dirs, str | os.PathLike) else run_dirs)]
    if not dirs:
        raise InputError("no Run directory was given; pass at least one, e.g. runs/cartpole-0")
    if options.output_format == "minari":
        require_minari()
    else:
        require_pyarrow()
    target = Path(out)
    check_output_dir(target, overwrite=overwrite)
    began = clock()
    with ExitStack() as stack:
        runs: list[tuple[Ledger, RunFacts]] = []
        for directory in dirs:
            ledger = stack.enter_context(open_run(directory))
            item = read_run_facts(ledger)
            if item.spec is None and spec_for is not None:
                item = replace(item, spec=spec_for(item.benchmark))
            runs.append((ledger, item))
        facts = [item for _, item in runs]
        _check_distinct(facts)
        options = _for_records(options, facts, asked=configs is not None)
        observation, action = _encodings(facts, options.json_spaces)
        where = target.absolute()  # Minari's storage resolves relative paths against its own folder
        created = make_parents(where)
        staging = staging_dir(where)
        try:
            written, steps, episodes, minari = _write(
                runs, staging, options, observation, action, minari_dataset_id, on_progress
            )
            _write_card(staging, written, facts, options, observation, action, minari)
            publish(staging, where, overwrite=overwrite)
        except BaseException:
            discard(staging)
            remove_parents(created)
            raise
    return ExportReport(
        out=target,
        output_format=options.output_format,
        visibility=options.visibility,
        reward=options.reward,
        configs=tuple(report for report, _ in written),
        runs=tuple(_run_report(item) for item in facts),
        observation_encoding=observation.label(),
        action_encoding=action.label(),
        steps=steps,
        episodes=episodes,
        seconds=clock() - began,
        minari_dataset_id=minari.dataset_id if minari is not None else None,
    )


def _write(
    runs: Sequence[tuple[Ledger, RunFacts]],
    root: Path,
    options: ExportOptions,
    observation: ValueEncoding,
    action: ValueEncoding,
    minari_dataset_id: str | None,
    on_progress: Callable[[str, int, int], None] | None,
) -> tuple[list[tuple[ConfigReport, Any]], int, int | None, MinariResult | None]:
    if options.output_format == "minari":
        from evoledger.exporters.minari_export import write_minari

        on_episode = None if on_progress is None else partial(on_progress, "minari")
        result = write_minari(runs, root, options, dataset_id=minari_dataset_id, on_episode=on_episode)
        return [], result.steps, result.episodes, result
    from evoledger.exporters.hf_export import write_configs

    written = write_configs(runs, root, options, observation, action, on_progress=on_progress)
    reports = {report.name: report for report, _ in written}
    steps = reports["steps"].rows if "steps" in reports else 0
    episodes = reports["episodes"].rows if "episodes" in reports else None
    return list(written), steps, episodes, None


def _write_card(
    root: Path,
    written: Sequence[tuple[ConfigReport, Any]],
    facts: Sequence[RunFacts],
    options: ExportOptions,
    observation: ValueEncoding,
    action: ValueEncoding,
    minari: MinariResult | None,
) -> None:
    from evoledger.exporters.card import CardInput, render_card

    card = CardInput(
        configs=written,
        runs=[_run_report(item) for item in facts],
        visibility=options.visibility,
        reward=options.reward,
        observation=observation,
        action=action,
        spaces=_spaces(facts),
        evoledger_version=__version__,
        ledger_format_version=LEDGER_FORMAT_VERSION,
        output_format=options.output_format,
        minari_dataset_id=minari.dataset_id if minari is not None else None,
        minari_splits=dict(minari.splits) if minari is not None else {},
        minari_env_spec=minari.env_spec if minari is not None else None,
    )
    (root / CARD_NAME).write_text(render_card(card), encoding="utf-8")
