"""docs/architecture.md stays true: its Event table is the schema's, and every file it names exists.

The repository stands alone: no module, test or document refers to a design document outside it.
"""

from __future__ import annotations

import re
from pathlib import Path

from evoledger.ledger.events import EVENT_TYPES
from evoledger.ledger.events.union import version_of

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SKIP_DIRS = {".git", ".venv", "build", "__pycache__", ".hypothesis", ".ruff_cache", ".mypy_cache"}


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def _event_rows(text: str) -> dict[str, tuple[str, int, str]]:
    rows: dict[str, tuple[str, int, str]] = {}
    for line in _section(text, "### Event kinds").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1].strip("`"), int(cells[2]), cells[3])
    return rows


def _expected_row(kind: str) -> str:
    cls = EVENT_TYPES[kind]
    return f"| `{kind}` | `{cls.__name__}` | {version_of(cls)} | {cls.visibility} | <when it is recorded> |"


def test_the_event_table_is_the_schema() -> None:
    documented = _event_rows(ARCHITECTURE.read_text(encoding="utf-8"))
    expected = {kind: (cls.__name__, version_of(cls), cls.visibility) for kind, cls in EVENT_TYPES.items()}
    missing = sorted(set(expected) - set(documented))
    assert not missing, "docs/architecture.md lacks Event kinds; add:\n" + "\n".join(map(_expected_row, missing))
    assert not set(documented) - set(expected), "docs/architecture.md lists Event kinds the schema does not have"
    wrong = [_expected_row(kind) for kind in expected if documented[kind] != expected[kind]]
    assert not wrong, "docs/architecture.md has outdated rows; they should read:\n" + "\n".join(wrong)


def test_the_table_check_sees_a_missing_kind() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert "run-ended" in _event_rows(text)
    assert "run-ended" not in _event_rows(re.sub(r"\n\| `run-ended` [^\n]*", "", text))


def test_every_file_the_page_names_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|md))`", text))
    named |= {target.removeprefix("../") for target in re.findall(r"\]\(([^)#]+\.md)\)", text)}
    assert len(named) > 30
    missing = sorted(p for p in named if not (ROOT / p).exists() and not (ARCHITECTURE.parent / p).exists())
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_nothing_refers_to_a_design_document_outside_the_repository() -> None:
    offenders = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if set(rel.parts) & SKIP_DIRS or path.suffix not in {".py", ".md", ".toml"} or path == Path(__file__):
            continue
        if re.search(r"\bDESIGN\b", path.read_text(encoding="utf-8", errors="replace")):
            offenders.append(str(rel))
    assert not offenders, (
        f"these refer to DESIGN.md, which is not in the repository (use docs/architecture.md): {offenders}"
    )
