"""What an export may be asked for: dataset configs, visibility, reward source, output format.

Every check raises an :class:`~evoledger.ledger.errors.InputError` subclass whose message names the
wrong value and the accepted ones (with a "did you mean" for misspelt config names).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, cast

from evoledger.ledger.errors import ConfigError, UnknownNameError

__all__ = [
    "CONFIG_NAMES",
    "OUTPUT_FORMATS",
    "REWARD_SOURCES",
    "VISIBILITIES",
    "ConfigName",
    "ExportOptions",
    "OutputFormat",
    "RewardSource",
    "Visibility",
    "check_configs",
]

ConfigName = Literal["steps", "episodes", "submissions", "messages"]
Visibility = Literal["public", "all"]
RewardSource = Literal["assessment", "validation", "best_public"]
OutputFormat = Literal["hf", "minari"]

CONFIG_NAMES: Final[tuple[ConfigName, ...]] = ("steps", "episodes", "submissions", "messages")
"""The dataset configs, one per granularity, in the order they are written."""
VISIBILITIES: Final[tuple[Visibility, ...]] = ("public", "all")
REWARD_SOURCES: Final[tuple[RewardSource, ...]] = ("assessment", "validation", "best_public")
OUTPUT_FORMATS: Final[tuple[OutputFormat, ...]] = ("hf", "minari")


def check_configs(names: Iterable[str] | None) -> tuple[ConfigName, ...]:
    """The requested configs in canonical order (all of them for ``None``); unknown names are refused.

    Names may also be given comma-separated (``"steps,episodes"``); repeats are ignored.
    """
    if names is None:
        return CONFIG_NAMES
    wanted: set[str] = set()
    for raw in names:
        for name in str(raw).split(","):
            name = name.strip()
            if not name:
                continue
            if name not in CONFIG_NAMES:
                raise UnknownNameError("export config", name, CONFIG_NAMES)
            wanted.add(name)
    if not wanted:
        raise ConfigError(f"--config names no export config; choose from {', '.join(CONFIG_NAMES)}")
    return tuple(name for name in CONFIG_NAMES if name in wanted)


def _choice(what: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UnknownNameError(what, value, allowed)
    return value


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """A checked export request (build it with :meth:`of`)."""

    configs: tuple[ConfigName, ...]
    visibility: Visibility
    reward: RewardSource
    output_format: OutputFormat
    json_spaces: bool
    row_group_rows: int | None

    @classmethod
    def of(
        cls,
        *,
        configs: Iterable[str] | None,
        visibility: str,
        reward: str,
        output_format: str,
        json_spaces: bool,
        row_group_rows: int | None,
    ) -> ExportOptions:
        """Check every option; raises ``UnknownNameError``/``ConfigError`` with the accepted values."""
        fmt = cast(OutputFormat, _choice("output format", output_format, OUTPUT_FORMATS))
        chosen = check_configs(configs)
        if fmt == "minari" and chosen != ("steps",):
            if configs is not None:
                raise ConfigError(
                    f"--format minari writes step data only, but configs {list(chosen)} were asked for; "
                    "drop --config or pass --config steps"
                )
            chosen = ("steps",)
        if row_group_rows is not None and (
            isinstance(row_group_rows, bool) or not isinstance(row_group_rows, int) or row_group_rows < 1
        ):
            raise ConfigError(f"row_group_rows must be a positive integer or None, got {row_group_rows!r}")
        return cls(
            configs=chosen,
            visibility=cast(Visibility, _choice("visibility", visibility, VISIBILITIES)),
            reward=cast(RewardSource, _choice("reward source", reward.replace("-", "_"), REWARD_SOURCES)),
            output_format=fmt,
            json_spaces=bool(json_spaces),
            row_group_rows=row_group_rows,
        )
