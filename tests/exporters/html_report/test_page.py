"""The HTML report as a document: self-contained, escaped, deterministic, with its sections, on synthetic Runs."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from evoledger.exporters.html_report import (
    CONTENT_SECURITY_POLICY,
    EmbeddedMedia,
    build_report,
    read_report_run,
    render_report,
)
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import InputError, LedgerNotFoundError
from evoledger.ledger.events import BenchmarkIdentity, EvaluationStarted
from evoledger.ledger.store import Ledger

_VOID = {"meta", "br", "img", "hr", "input", "link", "source", "area", "base", "col", "embed", "wbr", "track"}
_SVG_LEAVES = {"circle", "rect", "line", "polyline", "polygon", "path"}
_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x1f\x15\xc4\x89"


class _Document(HTMLParser):
    """Every start tag with its attributes, and whether every element that is opened is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def _parse(html: str) -> _Document:
    document = _Document()
    document.feed(html)
    document.close()
    return document


def _run(synth: SimpleNamespace, run_id: str = "html-1") -> Path:
    ok = synth.cartpole(4)
    failed = synth.cartpole(2, status="exception")
    return synth.run(
        synth.Run(run_id, [[ok, failed], [ok], [ok, ok, ok]], validation=[ok], assessment=[ok, synth.cartpole(6)])
    )


def test_the_report_is_one_self_contained_page(synth: SimpleNamespace) -> None:
    html = build_report([_run(synth)])
    document = _parse(html)
    assert document.problems == []
    assert document.stack == []
    names = [tag for tag, _ in document.tags]
    assert not {"script", "link", "iframe", "object", "embed", "base"} & set(names)
    for tag, attrs in document.tags:
        for key in ("src", "href", "action", "poster", "srcset"):
            value = attrs.get(key)
            assert value is None or value.startswith(("data:", "#")), f"<{tag} {key}={value!r}>"
    assert "http:" not in html
    assert "https:" not in html  # nothing could point outside the page
    csp = [a for t, a in document.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [a["content"] for a in csp] == [CONTENT_SECURITY_POLICY]
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY


def test_the_page_draws_every_submission_and_the_judging(synth: SimpleNamespace) -> None:
    html = build_report([_run(synth)])
    curve = html.split("<h3>Learning curve</h3>", 1)[1].split("</svg>", 1)[0]
    titles = re.findall(r"<title>(submission-\d+: (?:public score|no score)[^<]*)</title>", curve)
    assert len({t.split(":")[0] for t in titles}) == 3
    assert "Policy failures exception 1" in curve  # Submission 1's failed Episode is marked
    assert 'class="fail"' in curve
    assert 'class="best"' in curve
    assert 'class="assess"' in curve
    assert 'class="sel"' in curve
    assert 'class="cand"' in curve
    assert 'class="val"' in curve
    table = html.split('<table class="submissions">', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr") == 4
    assert "exception 1" in table
    assert "&#9733; selected" in table
    assert "+++ b/params.json" in html  # the Program diff against the previous Submission
    assert "Episode return distribution" in html
    assert "failures by code" in html
    assert "not audited" in html  # no verdict was given


def test_recorded_text_is_escaped(synth: SimpleNamespace) -> None:
    run = read_report_run(_run(synth))
    hostile = '+<img src="http://example.org/x.png"><script>alert(1)</script>'
    html = render_report([replace(run, diffs=dict.fromkeys(run.diffs, hostile))])
    assert "<script>" not in html
    assert 'src="http' not in html
    assert "&lt;img src=&quot;http://example.org/x.png&quot;&gt;" in html


def test_the_same_runs_give_the_same_bytes(synth: SimpleNamespace) -> None:
    path = _run(synth)
    assert build_report([path]) == build_report([path])


def test_an_audit_verdict_is_shown(synth: SimpleNamespace) -> None:
    path = _run(synth)
    passed = build_report([path], audit=lambda _: {"ok": True, "checks": [{"name": "integrity", "status": "pass"}]})
    failed = build_report([path], audit=lambda _: {"ok": False, "checks": [{"name": "protocol", "status": "fail"}]})
    assert '<span class="ok">pass</span>' in passed
    assert "integrity: pass" in passed
    assert '<span class="bad">FAIL</span>' in failed
    assert "protocol: fail" in failed


def test_several_runs_are_compared(synth: SimpleNamespace) -> None:
    html = build_report([_run(synth, "cmp-1"), _run(synth, "cmp-2")])
    assert html.index('id="comparison"') < html.index('id="run-1"') < html.index('id="run-2"')
    board = html.split('<table class="leaderboard">', 1)[1].split("</table>", 1)[0]
    assert board.count("<tr>") == 2  # header + one Agent x Benchmark row over both Runs
    assert "<td class=num>2</td><td class=num>2</td><td class=num>2.5</td><td class=num>&plusmn; 0</td>" in board
    overlay = html.split('id="comparison"', 1)[1].split("</svg>", 1)[0]
    assert overlay.count("<polyline") == 2


def test_rendered_episodes_are_embedded_inline(synth: SimpleNamespace) -> None:
    media = [
        EmbeddedMedia("Episode 3 of submission-000001", "image/gif", b"GIF89a..."),
        EmbeddedMedia("trace", "text/plain", b"step 0 action 1 <b>"),
        EmbeddedMedia("clip", "video/mp4", _PNG),
    ]
    html = build_report([_run(synth)], renders=media)
    section = html.split('id="renders"', 1)[1]
    assert '<img src="data:image/gif;base64,R0lGODlhLi4u"' in section
    assert "<pre>step 0 action 1 &lt;b&gt;</pre>" in section
    assert '<video controls loop muted src="data:video/mp4;base64,' in section
    with pytest.raises(InputError, match="media type 'text/html'"):
        build_report([_run(synth, "html-2")], renders=[EmbeddedMedia("page", "text/html", b"<p>")])


def test_what_is_not_a_run_is_refused_with_its_reason(tmp_path: Path) -> None:
    with pytest.raises(LedgerNotFoundError, match="does not exist"):
        read_report_run(tmp_path / "missing")
    with pytest.raises(LedgerNotFoundError, match="not a run directory"):
        read_report_run(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        read_report_run(tmp_path / "file")
    with pytest.raises(InputError, match="no Run to report"):
        render_report([])


def test_an_evaluation_record_is_not_a_run(tmp_path: Path) -> None:
    with Ledger.create(tmp_path / "eval") as ledger:
        ledger.append(
            [
                EvaluationStarted(
                    evaluation_id="evaluation-1",
                    benchmark=BenchmarkIdentity.of("cartpole", {}),
                    program_digest=digest_of(b"program"),
                    split="train",
                    episode_count=1,
                    seed=1,
                )
            ]
        )
    with pytest.raises(InputError, match="is an evaluation record"):
        read_report_run(tmp_path / "eval")


def test_a_run_without_scores_or_submissions_still_draws(synth: SimpleNamespace) -> None:
    empty = build_report([synth.run(synth.Run("empty", []))])
    assert "No Submission was accepted." in empty
    assert "No Episode ended." in empty
    assert "No Policy failure and no infra fault." in empty
    failed = synth.cartpole(2, status="timeout")
    html = build_report([synth.run(synth.Run("failing", [[failed, failed]]))])
    assert "timeout 2" in html
    assert 'class="bar-fail"' in html
