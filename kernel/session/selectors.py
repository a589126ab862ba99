"""Episode selectors: which Episode-pool indices a submission uses, written like ``0:2,4:8``.

Grammar::

    selector := part ("," part)*
    part     := index | index ":" index        # single index n, or half-open range a:b with a < b
    index    := "0" | [1-9][0-9]*              # decimal, no sign, no leading zeros

Rules:

* Parts are strictly increasing and never overlap: each part starts at or after the end of the previous
  one. Touching ranges are fine (``0:2,2:4``) and normalize to ``0:4``.
* Whitespace (spaces, tabs) around a part is trimmed, so ``"0:2, 4:8"`` is accepted; whitespace inside
  a part (``"0 :2"``) is an error.
* At most :data:`MAX_SELECTOR_LENGTH` characters, at most :data:`MAX_SELECTED` Episodes, indices below
  :data:`MAX_INDEX`. Whether the indices fit the Run's pool is the Host's check (:func:`check_in_pool`).

The normalized form (:func:`format_selector`) merges consecutive indices into ranges and writes a
one-Episode run as a single index: ``{0, 1, 4, 5, 6, 9}`` is ``0:2,4:7,9``.

Every violation raises :class:`SelectorError`, whose message quotes the offending part and a corrected
example. The client checks selectors early (exit 2); the Host checks them again, authoritatively
(``invalid_request``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from evoledger.ledger.errors import InputError

__all__ = [
    "MAX_INDEX",
    "MAX_SELECTED",
    "MAX_SELECTOR_LENGTH",
    "SelectorError",
    "check_in_pool",
    "format_selector",
    "normalize_selector",
    "parse_selector",
]

MAX_SELECTOR_LENGTH: Final = 4096
"""Longest selector text accepted, in characters."""

MAX_SELECTED: Final = 65_536
"""Most Episodes one selector may select."""

MAX_INDEX: Final = 1 << 31
"""Indices must be below this bound (pools are far smaller; the bound keeps arithmetic small)."""

_GENERIC_EXAMPLE: Final = "0:2,4:8"
_INDEX: Final = re.compile(r"0|[1-9][0-9]*")
_DASH_RANGE: Final = re.compile(r"([0-9]+)\s*(?:-|\.\.)\s*([0-9]+)")
_TRIM: Final = " \t"
_LEADING_ZEROS: Final = re.compile(r"(?<![0-9])0+(?=[0-9])")


class SelectorError(InputError):
    """An episode selector is malformed; ``part`` is the offending piece and ``example`` a corrected selector."""

    def __init__(self, selector: str, part: str | None, problem: str, example: str) -> None:
        where = f"part {part!r} " if part is not None else ""
        super().__init__(
            f"invalid episode selector {selector[:200]!r}: {where}{problem}; "
            f"for example {example!r} (half-open ranges a:b and single indices, strictly increasing)"
        )
        self.selector = selector
        self.part = part
        self.problem = problem
        self.example = example


def _index(selector: str, part: str, token: str) -> int:
    if _INDEX.fullmatch(token):
        value = int(token)
        if value >= MAX_INDEX:
            raise SelectorError(selector, part, f"has index {token}, which is too large (limit {MAX_INDEX - 1})", "0:2")
        return value
    if token.startswith("-") and token[1:].isdigit():
        raise SelectorError(selector, part, "has a negative index; Episode indices start at 0", "0:2")
    if token.isdigit():  # leading zeros (isdigit also admits non-ASCII digits, which fullmatch refused)
        if token.isascii():
            fixed = _LEADING_ZEROS.sub("", part)
            raise SelectorError(selector, part, f"writes {token!r} with leading zeros", fixed)
        raise SelectorError(selector, part, "uses non-ASCII digits; write indices with 0-9", _GENERIC_EXAMPLE)
    if token == "":
        raise SelectorError(selector, part, "has an empty index around ':'", _GENERIC_EXAMPLE)
    raise SelectorError(selector, part, f"has {token!r}, which is not a non-negative integer", _GENERIC_EXAMPLE)


def _parse_part(selector: str, raw: str) -> tuple[int, int]:
    part = raw.strip(_TRIM)
    if any(ch.isspace() for ch in part):
        squeezed = "".join(ch for ch in part if not ch.isspace())
        raise SelectorError(selector, part, "contains whitespace; spaces are allowed only around commas", squeezed)
    dash = _DASH_RANGE.fullmatch(part)
    if dash and _INDEX.fullmatch(dash[1]) and _INDEX.fullmatch(dash[2]):
        start, last = int(dash[1]), int(dash[2])
        return _reject_dash(selector, part, start, last)
    pieces = part.split(":")
    if len(pieces) == 1:
        value = _index(selector, part, pieces[0])
        return value, value + 1
    if len(pieces) > 2:
        raise SelectorError(selector, part, "has more than one ':'; a range is written a:b", _GENERIC_EXAMPLE)
    start, stop = _index(selector, part, pieces[0]), _index(selector, part, pieces[1])
    if start > stop:
        raise SelectorError(
            selector, part, f"is a reversed range ({start} > {stop}); write low:high", f"{stop}:{start}"
        )
    if start == stop:
        raise SelectorError(selector, part, "is an empty range (a:b needs a < b)", f"{start}:{start + 1}")
    return start, stop


def _reject_dash(selector: str, part: str, start: int, last: int) -> tuple[int, int]:
    low, high = min(start, last), max(start, last)
    example = f"{low}:{high + 1}" if high > low else str(low)
    raise SelectorError(selector, part, "is not a range: ranges are half-open and written a:b with ':'", example)


def _ranges(selector: str) -> list[tuple[int, int]]:
    """Parse ``selector``; the errors' examples are first guesses (the whole selector with one part fixed)."""
    if not isinstance(selector, str):
        raise SelectorError(str(selector), None, f"must be a string, not {type(selector).__name__}", _GENERIC_EXAMPLE)
    if len(selector) > MAX_SELECTOR_LENGTH:
        problem = f"is {len(selector)} characters long (limit {MAX_SELECTOR_LENGTH}); use wider ranges"
        raise SelectorError(selector, None, problem, "0:100")
    if selector.strip(_TRIM) == "":
        raise SelectorError(selector, None, "is empty; select at least one Episode", _GENERIC_EXAMPLE)
    parts = [raw.strip(_TRIM) for raw in selector.split(",")]
    if "" in parts:
        cleaned = ",".join(p for p in parts if p)
        problem = "is empty (two commas in a row, or a leading/trailing comma)"
        raise SelectorError(selector, "", problem, cleaned)
    ranges = []
    for position, part in enumerate(parts):
        try:
            ranges.append(_parse_part(selector, part))
        except SelectorError as exc:
            whole = ",".join([*parts[:position], exc.example, *parts[position + 1 :]])
            raise SelectorError(selector, exc.part, exc.problem, whole) from None
    previous_stop, previous_part = -1, ""
    for (start, stop), part in zip(ranges, parts, strict=True):
        if start < previous_stop:
            problem = (
                f"starts at {start}, before the previous part {previous_part!r} ends ({previous_stop}); "
                "parts must be strictly increasing and must not overlap"
            )
            raise SelectorError(selector, part, problem, _union_example(ranges))
        previous_stop, previous_part = stop, part
    total = sum(stop - start for start, stop in ranges)
    if total > MAX_SELECTED:
        raise SelectorError(selector, None, f"selects {total} Episodes (limit {MAX_SELECTED})", f"0:{MAX_SELECTED}")
    return ranges


def _union_example(ranges: Sequence[tuple[int, int]]) -> str:
    """The normalized union of ``ranges``: what the Agent most likely meant."""
    if sum(stop - start for start, stop in ranges) > MAX_SELECTED:
        return _GENERIC_EXAMPLE
    merged = sorted({i for start, stop in ranges for i in range(start, stop)})
    return format_selector(merged)


def _suggest(example: str) -> str:
    """Repair ``example`` a few steps further until it parses (``007:3`` -> ``7:3`` -> ``3:7``)."""
    for _ in range(6):
        try:
            _ranges(example)
        except SelectorError as exc:
            example = exc.example
        else:
            return example
    return _GENERIC_EXAMPLE


def parse_selector(selector: str) -> tuple[int, ...]:
    """The pool indices ``selector`` selects, strictly increasing.

    The :class:`SelectorError` it raises names the offending part and carries an ``example`` that parses.

    >>> parse_selector("0:2, 4:6,9")
    (0, 1, 4, 5, 9)
    """
    try:
        ranges = _ranges(selector)
    except SelectorError as exc:
        raise SelectorError(exc.selector, exc.part, exc.problem, _suggest(exc.example)) from None
    return tuple(i for start, stop in ranges for i in range(start, stop))


def format_selector(indices: Iterable[int]) -> str:
    """The normalized selector for strictly increasing, non-negative ``indices``.

    >>> format_selector([0, 1, 4, 5, 6, 9])
    '0:2,4:7,9'
    """
    values = list(indices)
    if not values:
        raise SelectorError("", None, "selects no Episode; select at least one", _GENERIC_EXAMPLE)
    runs: list[list[int]] = []
    previous = -1
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value >= MAX_INDEX:
            raise SelectorError(
                repr(values[:20]), None, f"has {value!r}, which is not an index in 0:{MAX_INDEX}", "0:2"
            )
        if value <= previous:
            problem = f"is not strictly increasing ({value} follows {previous})"
            raise SelectorError(repr(values[:20]), None, problem, "0:2,4:8")
        if runs and value == previous + 1:
            runs[-1][1] = value + 1
        else:
            runs.append([value, value + 1])
        previous = value
    return ",".join(str(start) if stop == start + 1 else f"{start}:{stop}" for start, stop in runs)


def normalize_selector(selector: str) -> str:
    """``selector`` in normalized form (``"0:2, 2:4,7"`` -> ``"0:4,7"``); :class:`SelectorError` if malformed."""
    return format_selector(parse_selector(selector))


def check_in_pool(indices: Sequence[int], pool_size: int) -> None:
    """Raise :class:`SelectorError` unless every index is inside an Episode pool of ``pool_size`` Episodes."""
    outside = [i for i in indices if i >= pool_size]
    if not outside:
        return
    inside = [i for i in indices if i < pool_size]
    example = format_selector(inside) if inside else (f"0:{min(pool_size, 2)}" if pool_size > 1 else "0")
    shown = format_selector(outside)
    raise SelectorError(
        format_selector(indices),
        shown,
        f"is outside the Episode pool, which has {pool_size} Episodes (valid indices 0:{pool_size})",
        example,
    )
