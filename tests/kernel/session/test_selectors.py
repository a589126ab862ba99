"""The episode selector grammar: round trips, normalization, and every malformed form rejected helpfully."""

from __future__ import annotations

import pytest
from evoledger.kernel.session.selectors import (
    MAX_INDEX,
    MAX_SELECTED,
    MAX_SELECTOR_LENGTH,
    SelectorError,
    check_in_pool,
    format_selector,
    normalize_selector,
    parse_selector,
)
from evoledger.ledger.errors import InputError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

index_sets = st.sets(st.integers(min_value=0, max_value=5000), min_size=1, max_size=60)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", (0,)),
        ("0:2", (0, 1)),
        ("0:2,4:8", (0, 1, 4, 5, 6, 7)),
        ("3,5,7:9", (3, 5, 7, 8)),
        ("0:2,2:4", (0, 1, 2, 3)),  # touching ranges are fine
        (" 0:2 , 4 ", (0, 1, 4)),  # whitespace around parts is trimmed
        ("\t1:3,\t5", (1, 2, 5)),
        ("10:12", (10, 11)),
    ],
)
def test_valid_selectors_parse(text: str, expected: tuple[int, ...]) -> None:
    assert parse_selector(text) == expected


@pytest.mark.parametrize(
    ("indices", "text"),
    [([0], "0"), ([0, 1], "0:2"), ([0, 1, 4, 5, 6, 9], "0:2,4:7,9"), ([3, 5], "3,5"), ([7, 8, 9, 11], "7:10,11")],
)
def test_format_selector_merges_runs(indices: list[int], text: str) -> None:
    assert format_selector(indices) == text


def test_normalize_selector_merges_touching_parts() -> None:
    assert normalize_selector("0:2, 2:4,7") == "0:4,7"
    assert normalize_selector("5:6") == "5"


@settings(max_examples=80, deadline=None)
@given(index_sets)
def test_formatted_indices_parse_back_to_themselves(indices: set[int]) -> None:
    ordered = sorted(indices)
    text = format_selector(ordered)
    assert parse_selector(text) == tuple(ordered)
    assert normalize_selector(text) == text


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_sets, st.data())
def test_any_split_into_ranges_and_indices_parses_to_the_same_set(indices: set[int], data: st.DataObject) -> None:
    """Cut the runs at arbitrary points, write singletons either way, sprinkle spaces around commas."""
    ordered = sorted(indices)
    parts: list[str] = []
    start = previous = ordered[0]
    for value in [*ordered[1:], None]:
        if value is not None and value == previous + 1 and not data.draw(st.booleans(), label="cut"):
            previous = value
            continue
        single = previous == start
        parts.append(str(start) if single and data.draw(st.booleans(), label="bare") else f"{start}:{previous + 1}")
        if value is not None:
            start = previous = value
    separators = [data.draw(st.sampled_from([",", ", ", " ,", " , ", ",\t"])) for _ in parts[1:]]
    text = parts[0] + "".join(sep + part for sep, part in zip(separators, parts[1:], strict=True))
    assert parse_selector(text) == tuple(ordered)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="0123456789:, -a.\t", max_size=30))
def test_arbitrary_text_parses_or_raises_selector_error_with_a_valid_example(text: str) -> None:
    error: SelectorError | None = None
    try:
        indices = parse_selector(text)
    except SelectorError as exc:
        error = exc
    if error is not None:
        assert parse_selector(error.example)  # the suggested correction always parses
        assert repr(text[:200]) in str(error)
    else:
        assert indices
        assert list(indices) == sorted(set(indices))
        assert parse_selector(format_selector(indices)) == indices


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=500), min_size=2, max_size=20))
def test_swapping_two_parts_is_rejected(indices: set[int]) -> None:
    parts = [str(i) for i in sorted(indices)]
    parts[0], parts[-1] = parts[-1], parts[0]
    with pytest.raises(SelectorError, match="strictly increasing"):
        parse_selector(",".join(parts))


@pytest.mark.parametrize(
    ("text", "part", "example"),
    [
        ("", None, "0:2,4:8"),
        ("   ", None, "0:2,4:8"),
        ("0:2,,4", "", "0:2,4"),
        ("0:2,", "", "0:2"),
        (",3", "", "3"),
        ("4:2", "4:2", "2:4"),
        ("0:2,5:3", "5:3", "0:2,3:5"),
        ("3:3", "3:3", "3:4"),
        ("-1", "-1", "0:2"),
        ("-3:2", "-3:2", "0:2"),
        ("0 :2", "0 :2", "0:2"),
        ("0: 2,5", "0: 2", "0:2,5"),
        ("007", "007", "7"),
        ("007:3", "007:3", "3:7"),
        ("1-3", "1-3", "1:4"),
        ("1..3", "1..3", "1:4"),
        ("0:4,2:6", "2:6", "0:6"),
        ("5,3", "3", "3,5"),
        ("2,2", "2", "2"),
        ("1:2:3", "1:2:3", "0:2,4:8"),
        ("a", "a", "0:2,4:8"),
        ("0:", "0:", "0:2,4:8"),
        ("\u0661", "\u0661", "0:2,4:8"),  # ARABIC-INDIC DIGIT ONE: a digit, but not ASCII
        (f"0:{MAX_INDEX + 1}", f"0:{MAX_INDEX + 1}", "0:2"),
    ],
)
def test_malformed_selectors_name_the_part_and_a_corrected_example(text: str, part: str | None, example: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_selector(text)
    error = info.value
    assert error.part == part
    assert error.example == example
    assert repr(example) in str(error)
    if part:
        assert repr(part) in str(error)
    parse_selector(error.example)
    assert isinstance(error, InputError)
    assert error.exit_code == 2


def test_too_long_and_too_many_are_rejected_without_expanding() -> None:
    with pytest.raises(SelectorError, match="characters long"):
        parse_selector(",".join(str(i) for i in range(0, 4 * MAX_SELECTOR_LENGTH, 2)))
    with pytest.raises(SelectorError, match=f"limit {MAX_SELECTED}"):
        parse_selector(f"0:{MAX_INDEX - 1}")
    assert len(parse_selector(f"0:{MAX_SELECTED}")) == MAX_SELECTED


def test_non_string_selector_is_rejected() -> None:
    with pytest.raises(SelectorError, match="must be a string"):
        parse_selector(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("indices", "match"),
    [([], "no Episode"), ([2, 1], "strictly increasing"), ([1, 1], "strictly increasing"), ([-1], "not an index")],
)
def test_format_selector_rejects_bad_index_lists(indices: list[int], match: str) -> None:
    with pytest.raises(SelectorError, match=match):
        format_selector(indices)


def test_check_in_pool() -> None:
    check_in_pool(parse_selector("0:10"), 10)
    with pytest.raises(SelectorError) as info:
        check_in_pool(parse_selector("0:2,8:12"), 10)
    assert info.value.part == "10:12"
    assert info.value.example == "0:2,8:10"
    assert "10 Episodes" in str(info.value)
    with pytest.raises(SelectorError) as info:
        check_in_pool((20,), 10)
    assert info.value.example == "0:2"
