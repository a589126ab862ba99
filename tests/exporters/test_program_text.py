"""Program diffs (they apply with git) and Episode selectors (they match the kernel's)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from evoledger.exporters.program_text import ProgramFile, ProgramText, program_diff
from evoledger.exporters.selectors import format_episode_selector
from evoledger.kernel.session.selectors import format_selector
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import InputError
from hypothesis import given, settings
from hypothesis import strategies as st


def _program(files: dict[str, bytes]) -> ProgramText:
    out = {}
    for path, data in files.items():
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        out[path] = ProgramFile(path, digest_of(data), len(data), text)
    return ProgramText(digest_of(repr(sorted(files.items())).encode()), out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 200), unique=True, min_size=1, max_size=30).map(sorted))
def test_selector_matches_the_kernel(indices: list[int]) -> None:
    assert format_episode_selector(indices) == format_selector(indices)


def test_selector_refuses_what_the_kernel_refuses() -> None:
    with pytest.raises(InputError, match="strictly increasing"):
        format_episode_selector([2, 1])
    with pytest.raises(InputError, match="at least one"):
        format_episode_selector([])


def test_same_program_has_an_empty_diff() -> None:
    program = _program({"policy.py": b"x = 1\n"})
    assert program_diff(program, program) == ""


_TEXT = st.lists(st.sampled_from(["a", "b", "c = 1", "", "def f():", "    return 2"]), max_size=8).map(
    lambda lines: "\n".join(lines)
)


@pytest.mark.skipif(shutil.which("git") is None, reason="git applies the diff")
@settings(max_examples=30, deadline=None)
@given(
    before=st.dictionaries(st.sampled_from(["policy.py", "params.json", "lib/util.py"]), _TEXT, min_size=1),
    after=st.dictionaries(st.sampled_from(["policy.py", "params.json", "lib/util.py"]), _TEXT, min_size=1),
)
def test_diff_applies_with_git(
    tmp_path_factory: pytest.TempPathFactory, before: dict[str, str], after: dict[str, str]
) -> None:
    root = tmp_path_factory.mktemp("apply")
    for path, text in before.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    old = _program({p: t.encode() for p, t in before.items()})
    new = _program({p: t.encode() for p, t in after.items()})
    diff = program_diff(old, new)
    if not diff:
        assert before == after
        return
    (root / "change.diff").write_text(diff, encoding="utf-8")
    result = subprocess.run(
        ["git", "apply", "--unsafe-paths", "change.diff"], cwd=root, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr + "\n" + diff
    got = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file() and p.name != "change.diff"}
    assert got == after


def test_binary_files_are_named_not_diffed() -> None:
    old = _program({"policy.py": b"x = 1\n", "model.bin": b"\xff\x00"})
    new = _program({"policy.py": b"x = 2\n", "model.bin": b"\xfe\x00"})
    diff = program_diff(old, new)
    assert "Binary files a/model.bin and b/model.bin differ" in diff
    assert "-x = 1\n+x = 2" in diff


def test_program_rows_are_sorted_and_keep_text(tmp_path: Path) -> None:
    program = _program({"b.py": b"b\n", "a.bin": b"\xff"})
    assert program.rows() == [
        {"path": "a.bin", "digest": digest_of(b"\xff"), "size": 1, "text": None},
        {"path": "b.py", "digest": digest_of(b"b\n"), "size": 2, "text": "b\n"},
    ]
