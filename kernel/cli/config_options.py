"""Click options generated from a pydantic config model, so a command's flags can never drift from its config.

Every leaf field of the model (nested models are walked) becomes one option: its name is the field's path
(``validation.episodes`` -> ``--validation-episodes``) unless the command gives it a shorter one, its help is
the field's ``description``, its default the field's default, and its bounds the field's ``ge`` / ``gt`` /
``le`` / ``lt`` (a ``Literal`` becomes a choice, a ``tuple[str, ...]`` a repeatable option, a ``bool`` a
``--x/--no-x`` flag). :func:`config_values` turns the parsed options back into the model's nested mapping.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeGuard, TypeVar, Union, get_args, get_origin

import annotated_types
import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = [
    "POLICY_LIMIT_FLAGS",
    "ConfigOption",
    "allowed_values",
    "config_option_decorator",
    "config_options",
    "config_values",
    "type_name",
]

_F = TypeVar("_F", bound=Callable[..., object])

POLICY_LIMIT_FLAGS: Final[dict[str, tuple[str, ...]]] = {
    "limits.act_timeout_seconds": ("--act-timeout",),
    "limits.memory_bytes": ("--policy-memory-bytes",),
    "limits.cpu_seconds": ("--policy-cpu-seconds",),
    "limits.log_bytes": ("--policy-log-bytes",),
}
"""The flags of the Policy limits (a config's ``limits`` field, not prefixed), the same on ``run`` and ``evaluate``."""


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One leaf field of a config model and the click option generated for it."""

    path: tuple[str, ...]
    flags: tuple[str, ...]
    field: FieldInfo
    annotation: Any

    @property
    def dest(self) -> str:
        """The keyword the command function receives the value under."""
        return "_".join(self.path)

    @property
    def default(self) -> Any:
        return self.field.get_default(call_default_factory=True)

    @property
    def help(self) -> str:
        return self.field.description or ""

    def param_type(self) -> click.ParamType[Any] | None:
        """The click type: a range from the field's bounds, a choice of its literals, or None (a string)."""
        kind = _without_none(self.annotation)
        if get_origin(kind) is Literal:
            return click.Choice([str(v) for v in get_args(kind)])
        if get_origin(kind) is tuple:
            return None
        bounds = _bounds(self.field)
        if kind is bool:
            return None
        if kind is int:
            return click.IntRange(**bounds)
        if kind is float:
            return click.FloatRange(**bounds)
        return None

    def click_option(self) -> Callable[[_F], _F]:
        """The ``click.option`` decorator of this field."""
        kind = _without_none(self.annotation)
        if kind is bool:
            name = self.flags[0].removeprefix("--")
            return click.option(
                f"--{name}/--no-{name}", self.dest, default=self.default, show_default=True, help=self.help
            )
        multiple = get_origin(kind) is tuple
        return click.option(
            *self.flags,
            self.dest,
            type=self.param_type(),
            default=self.default,
            multiple=multiple,
            show_default=self.default is not None and not multiple,
            help=self.help,
        )


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _bounds(field: FieldInfo) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            bounds["min"] = rule.ge
        elif isinstance(rule, annotated_types.Gt):
            bounds.update(min=rule.gt, min_open=True)
        elif isinstance(rule, annotated_types.Le):
            bounds["max"] = rule.le
        elif isinstance(rule, annotated_types.Lt):
            bounds.update(max=rule.lt, max_open=True)
    return bounds


def _is_model(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def config_options(
    model: type[BaseModel],
    *,
    flags: Mapping[str, tuple[str, ...]] | None = None,
    flatten: Iterable[str] = (),
    skip: Iterable[str] = (),
    _prefix: tuple[str, ...] = (),
) -> list[ConfigOption]:
    """One :class:`ConfigOption` per leaf field of ``model``, in declaration order.

    ``flags`` maps a dotted field path (``"agent.name"``) to its flags (``("--agent",)``); ``flatten`` names nested
    models whose fields are not prefixed with the model's name; ``skip`` names paths the command handles itself.
    """
    flags, flat, skipped = dict(flags or {}), set(flatten), set(skip)
    found: list[ConfigOption] = []
    for name, field in model.model_fields.items():
        path = (*_prefix, name)
        dotted = ".".join(path)
        if dotted in skipped:
            continue
        if _is_model(field.annotation):
            found.extend(config_options(field.annotation, flags=flags, flatten=flat, skip=skipped, _prefix=path))
            continue
        named = [part for n, part in enumerate(path[:-1]) if ".".join(path[: n + 1]) not in flat]
        derived = ("--" + "-".join([*named, name]).replace("_", "-"),)
        found.append(ConfigOption(path, flags.get(dotted, derived), field, field.annotation))
    return found


def config_option_decorator(options: Iterable[ConfigOption]) -> Callable[[_F], _F]:
    """A decorator adding every option, in order, to a click command."""
    ordered = list(options)

    def decorate(function: _F) -> _F:
        for option in reversed(ordered):
            function = option.click_option()(function)
        return function

    return decorate


def config_values(options: Iterable[ConfigOption], parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The nested mapping the config model validates, from the values click parsed (keyed by ``dest``)."""
    values: dict[str, Any] = {}
    for option in options:
        node = values
        for part in option.path[:-1]:
            node = node.setdefault(part, {})
        value = parsed[option.dest]
        node[option.path[-1]] = tuple(value) if get_origin(_without_none(option.annotation)) is tuple else value
    return values


def type_name(annotation: Any) -> str:
    """A field's type in words: ``int``, ``float or none``, ``text``, ``choice``, ``list of text``."""
    kind = _without_none(annotation)
    optional = " or none" if kind is not annotation else ""
    if get_origin(kind) is Literal:
        return "choice" + optional
    if get_origin(kind) is tuple:
        return "list of text" + optional
    names = {bool: "true/false", int: "integer", float: "number", str: "text"}
    return names.get(kind, getattr(kind, "__name__", str(kind))) + optional


def allowed_values(field: FieldInfo) -> str:
    """The values a field accepts beyond its type: its literals or its bounds (``1 <= x <= 500``), else ``""``."""
    kind = _without_none(field.annotation)
    if get_origin(kind) is Literal:
        return ", ".join(repr(v) for v in get_args(kind))
    bounds = _bounds(field)
    low = "" if "min" not in bounds else f"{bounds['min']} {'<' if bounds.get('min_open') else '<='} "
    high = "" if "max" not in bounds else f" {'<' if bounds.get('max_open') else '<='} {bounds['max']}"
    return f"{low}x{high}" if low or high else ""
