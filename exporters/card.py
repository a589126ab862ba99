"""The dataset card: ``README.md`` with YAML front matter that ``datasets.load_dataset`` reads offline.

The front matter lists every config with its ``data_files`` per split, its ``features`` and split sizes
(``datasets`` verifies ``num_examples`` on load), a license placeholder, and an ``evoledger`` block
with the export format, the evoledger and ledger format versions and each source Run's head hash.
The card is a pure function of what was written: no timestamps, no machine paths, so the same Runs
give the same bytes. YAML is emitted here (strings as JSON double-quoted scalars, which YAML reads
verbatim) rather than through a YAML library, to keep that byte stability under our control.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa
from evoledger.exporters.output_dir import EXPORT_FORMAT
from evoledger.exporters.report import ConfigReport, RunReport
from evoledger.exporters.schema import features_yaml
from evoledger.exporters.spaces import ValueEncoding
from evoledger.ledger.errors import EncodingError

__all__ = ["CardInput", "render_card", "with_infinities", "yaml_block"]

_KEY: Final = re.compile(r"^[a-z][a-z0-9_]*$")
_RESERVED: Final = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_NOT_PRINTABLE: Final = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")

_CONFIG_TEXT: Final = {
    "steps": "one row per Environment step: observation, action, reward, next observation, end flags",
    "episodes": "one row per Episode: return, steps, outcome, Program and trajectory digests",
    "submissions": "one row per Submission: Program files and diff, Episodes asked for, budget, score, "
    "Feedback, and the outcome labels (candidate, selected, Validation and Assessment scores)",
    "messages": "one row per Run: the Agent's session as a chat (task, submit/finish tool calls, Feedback "
    "replies) and its final reward",
}
_SPLIT_TEXT: Final = {
    "train": "the Agent's own Episodes (public train pool)",
    "validation": "host-only Validation Episodes of the Candidates",
    "assessment": "host-only held-out Assessment Episodes of the selected Candidate",
}


@dataclass(frozen=True, slots=True)
class CardInput:
    """Everything the card states."""

    configs: Sequence[tuple[ConfigReport, pa.Schema]]
    runs: Sequence[RunReport]
    visibility: str
    reward: str
    observation: ValueEncoding
    action: ValueEncoding
    spaces: Mapping[str, Mapping[str, Any]]
    """Benchmark id -> its public ``observation_space``/``action_space`` descriptions."""
    evoledger_version: str
    ledger_format_version: int
    output_format: str = "hf"
    minari_dataset_id: str | None = None
    minari_splits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Split -> (Episodes, steps) of a Minari export."""
    minari_env_spec: str | None = None
    """The gymnasium id a Minari export recorded as its ``env_spec`` (``None``: none)."""


def with_infinities(space: Any, bound: str | None = None) -> Any:
    """A space description with the ``null`` bounds of Boxes (how JSON records infinity) as ``-inf``/``inf``."""
    if isinstance(space, dict):
        is_box = space.get("type") == "Box"
        return {
            key: with_infinities(value, key if is_box and key in ("low", "high") else None)
            for key, value in space.items()
        }
    if isinstance(space, list):
        return [with_infinities(value, bound) for value in space]
    if space is None and bound is not None:
        return -math.inf if bound == "low" else math.inf
    return space


_LISTED_BOUNDS: Final = 64
"""Box bounds with more values than this are summarised in the card (an image's would fill megabytes)."""


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _compact_bounds(space: Any) -> Any:
    """A space description whose long Box bounds are summarised: one value when all are equal, else a
    ``"<n values from a to b>"`` note."""
    if isinstance(space, dict):
        is_box = space.get("type") == "Box"
        result = {}
        for key, value in space.items():
            leaves = _leaves(value) if is_box and key in ("low", "high") and isinstance(value, list) else None
            if leaves is not None and len(leaves) > _LISTED_BOUNDS:
                result[key] = leaves[0] if all(leaf == leaves[0] for leaf in leaves) else _summary(leaves)
            else:
                result[key] = _compact_bounds(value)
        return result
    if isinstance(space, list):
        return [_compact_bounds(item) for item in space]
    return space


def _summary(leaves: list[Any]) -> str:
    numbers = [leaf for leaf in leaves if isinstance(leaf, int | float) and not isinstance(leaf, bool)]
    if not numbers:
        return f"<{len(leaves)} values>"
    return f"<{len(leaves)} values from {min(numbers)} to {max(numbers)}>"


def _quote(text: str) -> str:
    """A YAML double-quoted scalar: JSON's escapes, plus ``\\uXXXX`` for what YAML may not hold raw."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _NOT_PRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EncodingError(f"cannot write the non-finite number {value!r} into a dataset card")
        text = repr(value)  # YAML 1.1 (PyYAML) reads "1e+16" as a string: it wants "1.0e+16"
        return text.replace("e", ".0e") if "e" in text and "." not in text else text
    if isinstance(value, str):
        return _quote(value)
    raise EncodingError(f"cannot write a {type(value).__name__} into a dataset card: {value!r:.80}")


def _inline(value: Any) -> str | None:
    if isinstance(value, dict | list):
        return ("{}" if isinstance(value, dict) else "[]") if not value else None
    return _scalar(value)


def _key(key: str) -> str:
    return key if _KEY.match(key) and key not in _RESERVED else _quote(key)


def yaml_block(value: Any, indent: int = 0) -> list[str]:
    """``value`` (dicts, lists, JSON scalars) as block-style YAML lines, in the given key order."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            text = _inline(item)
            if text is not None:
                lines.append(f"{pad}{_key(key)}: {text}")
            else:
                lines.append(f"{pad}{_key(key)}:")
                lines.extend(yaml_block(item, indent + 2))
        return lines
    if isinstance(value, list):
        for item in value:
            text = _inline(item)
            if text is not None:
                lines.append(f"{pad}- {text}")
            else:
                nested = yaml_block(item, indent + 2)
                lines.append(f"{pad}- {nested[0][indent + 2 :]}")
                lines.extend(nested[1:])
        return lines
    return [pad + _scalar(value)]


def _front_matter(card: CardInput) -> dict[str, Any]:
    configs: list[dict[str, Any]] = []
    info: list[dict[str, Any]] = []
    for report, schema in card.configs:
        if not report.splits:
            continue  # no rows at all: datasets cannot load it, so it is not offered
        entry: dict[str, Any] = {"config_name": report.name}
        if not configs:
            entry["default"] = True
        entry["data_files"] = [{"split": s.split, "path": f"{report.name}/{s.split}-*.parquet"} for s in report.splits]
        configs.append(entry)
        info.append(
            {
                "config_name": report.name,
                "features": features_yaml(schema),
                "splits": [
                    {"name": s.split, "num_bytes": s.arrow_bytes, "num_examples": s.rows} for s in report.splits
                ],
            }
        )
    benchmarks = sorted({run.benchmark for run in card.runs})
    front: dict[str, Any] = {
        "license": "other",
        "pretty_name": f"evoledger rollouts: {', '.join(benchmarks)}",
        "task_categories": ["reinforcement-learning"],
        "tags": ["evoledger", "rollouts", "reinforcement-learning", "program-synthesis", "coding-agents"],
    }
    if configs:
        front["configs"] = configs
        front["dataset_info"] = info
    front["evoledger"] = {
        "export_format": EXPORT_FORMAT,
        "evoledger_version": card.evoledger_version,
        "ledger_format_version": card.ledger_format_version,
        "output_format": card.output_format,
        "visibility": card.visibility,
        "reward": card.reward,
        "observation_encoding": card.observation.label(),
        "action_encoding": card.action.label(),
        "minari_dataset_id": card.minari_dataset_id,
        "minari_env_spec": card.minari_env_spec,
        "runs": [
            {
                "run_id": run.run_id,
                "record": run.record,
                "head_hash": run.head_hash,
                "events": run.events,
                "format_version": run.format_version,
                "benchmark": run.benchmark,
                "benchmark_params_hash": run.benchmark_params_hash,
                "created_by": run.created_by,
                "signer": run.signer,
                "signature": run.signature,
            }
            for run in card.runs
        ],
    }
    return front


def _command(card: CardInput) -> str:
    parts = ["evoledger export", *(f"<run {run.run_id}>" for run in card.runs), "--out DIR"]
    if card.output_format == "minari":
        parts.append("--format minari")
    parts.extend(f"--config {report.name}" for report, _ in card.configs)
    parts.append(f"--visibility {card.visibility}")
    if card.reward != "assessment":
        parts.append(f"--reward {card.reward.replace('_', '-')}")
    return " ".join(parts)


def _body(card: CardInput) -> list[str]:
    names = ", ".join(sorted({run.benchmark for run in card.runs}))
    lines = [
        f"# evoledger rollouts: {names}",
        "",
        f"Rollouts of {len(card.runs)} evoledger Run(s), exported from their ledgers by evoledger "
        f"{card.evoledger_version}. Every row is a projection of the Runs' hash-chained event logs; the head "
        "hashes below identify exactly which records were exported.",
        "",
        "## Configs",
        "",
        "| config | what a row is | splits (rows) |",
        "|---|---|---|",
    ]
    for report, _ in card.configs:
        splits = ", ".join(f"{s.split} ({s.rows})" for s in report.splits) or "no rows (not loadable)"
        lines.append(f"| `{report.name}` | {_CONFIG_TEXT.get(report.name, '')} | {splits} |")
    if card.minari_dataset_id is not None:
        splits = ", ".join(
            f"{split} ({episodes} Episodes, {steps} steps)" for split, (episodes, steps) in card.minari_splits.items()
        )
        lines.append(
            f"| Minari `{card.minari_dataset_id}` (in `{card.minari_dataset_id}/data`) | one Minari episode per "
            "Episode: observations, actions, rewards, terminations, truncations; its metadata names the Run, "
            f"Submission, split, pool index and `episode_id` | {splits or 'no Episodes'} |"
        )
    loadable = [report.name for report, _ in card.configs if report.splits]
    if loadable:
        first = loadable[0]
        lines += [
            "",
            "```python",
            "from datasets import load_dataset",
            f'ds = load_dataset("path/to/this/folder", "{first}")',
            "```",
        ]
    if card.minari_dataset_id is not None:
        lines += [
            "",
            f"The step data is a Minari dataset with id `{card.minari_dataset_id}`:",
            "",
            "```python",
            "import os, minari",
            'os.environ["MINARI_DATASETS_PATH"] = "path/to/this/folder"',
            f'dataset = minari.load_dataset("{card.minari_dataset_id}")',
            "```",
            "",
            (
                f"Its `env_spec` is gymnasium's `{card.minari_env_spec}` with the Run's settings, so "
                "`dataset.recover_environment()` builds the environment the Episodes were played in."
                if card.minari_env_spec is not None
                else "The Benchmark is not a gymnasium environment, so the dataset records no `env_spec` and "
                "`dataset.recover_environment()` is not available."
            ),
        ]
    lines += ["", "Splits: " + "; ".join(f"`{k}` = {v}" for k, v in _SPLIT_TEXT.items()) + "."]
    if any(run.record == "evaluation" for run in card.runs):
        lines += [
            "",
            "Records of `evoledger evaluate --record-to` add their Episodes (`steps` and `episodes` only) in the split "
            "they were evaluated on, whatever the visibility: their `run_id` is the evaluation id and their "
            "`submission_id` is null.",
        ]
    lines += [
        "",
        "`episode_id` names one Episode uniquely across splits, Runs and datasets: "
        "`<run id>/<split>/<submission id, or evaluation>/<pool index>/<attempt>@<first 16 hex digits of the hash "
        "of the Event that recorded it>`. Step rows carry it with their 0-based `step` index.",
    ]
    lines += [
        "",
        "## Observations and actions",
        "",
        f"Observations are stored as `{card.observation.label()}`, actions as `{card.action.label()}`."
        + "".join(
            f" {what} are JSON text (sorted keys) because {encoding.reason}."
            for what, encoding in (("Observations", card.observation), ("Actions", card.action))
            if not encoding.typed
        ),
    ]
    for benchmark in sorted(card.spaces):
        spaces = json.dumps(with_infinities(_compact_bounds(card.spaces[benchmark])), indent=2, sort_keys=True)
        lines += ["", f"Spaces of `{benchmark}`:", "", "```json", spaces, "```"]
    if card.spaces:
        lines += [
            "",
            "Unbounded Box bounds are written `-Infinity` / `Infinity` (Python's `json.loads` reads them as floats).",
        ]
    lines += [
        "",
        "## Visibility",
        "",
        (
            "`public`: only what the Agent could see (its own train Episodes, Feedback, its session) plus outcome "
            "labels (selected Candidate, Validation and Assessment scores). No Validation or Assessment Episode "
            "and no Host seed is included."
            if card.visibility == "public"
            else "`all`: the Agent's train Episodes plus the host-only Validation and Assessment Episodes "
            "(splits `validation` and `assessment`). Host seeds are never exported."
        ),
        "",
        "## Source Runs",
        "",
        "| run | benchmark | head hash | events | end | selected | assessment score | signature |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in card.runs:
        score = "" if run.assessment_score is None else repr(run.assessment_score)
        signed = run.signature if run.signer is None else f"{run.signature} by `{run.signer}`"
        lines.append(
            f"| `{run.run_id}` | `{run.benchmark}` | `{run.head_hash}` | {run.events} | {run.end_reason or ''} "
            f"| {run.selected or ''} | {score} | {signed} |"
        )
    lines += [
        "",
        "A signature proves that the holder of that key signed the head hash (and so every event up to it); it does "
        "not prove the Host was honest. Check a Run with `evoledger ledger verify <run> --trusted-key <fingerprint>`.",
    ]
    lines += [
        "",
        "## How it was produced",
        "",
        "```",
        _command(card),
        "```",
        "",
        f"Export format `{EXPORT_FORMAT}`, ledger format version {card.ledger_format_version}. Parquet files are "
        "zstd-compressed with fixed row groups and no timestamps: the same Runs export to the same bytes.",
        "",
        "## License",
        "",
        "No license has been chosen: `license: other` is a placeholder. Set it in the YAML header before "
        "publishing, taking the Benchmarks' and the Agents' terms into account.",
    ]
    return lines


def render_card(card: CardInput) -> str:
    """The full ``README.md`` text."""
    front = yaml_block(_front_matter(card))
    return "\n".join(["---", *front, "---", "", *_body(card)]) + "\n"
