"""``evoledger report`` on the default Run (the session's one run of the README's main job), and run / resume
leaving ``host/report.html``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.tests.support.readme_run import MainJobRun


def _copy(run: MainJobRun, into: Path) -> Path:
    copy = into / run.run_dir.name
    shutil.copytree(run.run_dir, copy, symlinks=True)
    return copy


def test_run_leaves_host_report_html_and_prints_its_path(readme_main_run: MainJobRun) -> None:
    report = readme_main_run.run_dir / "host" / "report.html"
    assert report.is_file()
    assert not report.is_symlink()
    assert f"report: {report}" in " ".join(readme_main_run.done.stdout.split())  # rich may wrap a long path
    html = report.read_text(encoding="utf-8")
    assert "Run cartpole-1" in html
    assert 'class="best"' in html
    assert '<span class="ok">pass</span>: every check passed' in html  # the replay verdict, run at the end


def test_report_of_one_run(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    out = tmp_path / "new" / "folder" / "r.html"
    done = CliRunner().invoke(cli, ["report", str(readme_main_run.run_dir), "--out", str(out), "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.output)
    assert answer["out"] == str(out)
    assert answer["bytes"] == out.stat().st_size
    html = out.read_text(encoding="utf-8")
    assert "every check passed" in html
    assert 'id="comparison"' not in html
    again = CliRunner().invoke(cli, ["report", str(readme_main_run.run_dir), "-o", str(out), "--no-audit"])
    assert again.exit_code == 0
    assert f"wrote {out} (1 Run)" in again.output  # on one line, however long the path
    assert "not audited" in out.read_text(encoding="utf-8")  # replaced whole


def test_report_of_several_runs(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    copy = _copy(readme_main_run, tmp_path)
    out = tmp_path / "two.html"
    done = CliRunner().invoke(cli, ["report", str(readme_main_run.run_dir), str(copy), "--out", str(out), "-q"])
    assert done.exit_code == 0, done.output
    html = out.read_text(encoding="utf-8")
    assert 'id="comparison"' in html
    assert 'id="run-1"' in html
    assert 'id="run-2"' in html
    assert f"cartpole-1 ({copy})" in html  # two Runs with one id are told apart by their folders
    board = html.split('<table class="leaderboard">', 1)[1].split("</table>", 1)[0]
    assert "<td>hill-climb</td>" in board
    assert "<td class=num>2</td><td class=num>2</td>" in board


@pytest.mark.parametrize(
    ("case", "code", "message"),
    [
        ("missing", 3, "does not exist"),
        ("empty", 3, "is not a run directory"),
        ("file", 2, "is a file, not a Run directory"),
        ("out-folder", 2, "is a folder; name the HTML file to write"),
    ],
)
def test_report_errors_say_what_is_wrong(
    readme_main_run: MainJobRun, tmp_path: Path, case: str, code: int, message: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("not a run")
    run = {"missing": tmp_path / "nope", "empty": tmp_path / "empty", "file": tmp_path / "file"}
    target = run.get(case, readme_main_run.run_dir)
    out = tmp_path if case == "out-folder" else tmp_path / "r.html"
    done = CliRunner().invoke(cli, ["report", str(target), "--out", str(out)])
    assert done.exit_code == code, done.output
    assert message in " ".join(done.output.split())
    assert not (tmp_path / "r.html").exists()


def test_report_needs_a_run() -> None:
    done = CliRunner().invoke(cli, ["report"])
    assert done.exit_code == 2
    assert "Missing argument 'RUN [RUN...]'" in done.output


def test_resume_leaves_host_report_html(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    copy = _copy(readme_main_run, tmp_path)
    (copy / "host" / "report.html").unlink()
    done = CliRunner().invoke(cli, ["resume", str(copy), "--no-isolation", "--agent-isolation", "local", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["report_html"] == str(copy / "host" / "report.html")
    assert "Run cartpole-1" in (copy / "host" / "report.html").read_text(encoding="utf-8")


def test_resume_refuses_a_link_at_host_report_html(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    copy = _copy(readme_main_run, tmp_path)
    target = tmp_path / "elsewhere.html"
    target.write_text("keep me")
    (copy / "host" / "report.html").unlink()
    os.symlink(target, copy / "host" / "report.html")
    done = CliRunner().invoke(cli, ["resume", str(copy), "--no-isolation", "--agent-isolation", "local"])
    assert done.exit_code == 3, done.output
    assert "report.html" in done.output
    assert target.read_text() == "keep me"


def test_a_link_at_out_is_replaced_not_followed(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    out = tmp_path / "r.html"
    os.symlink(target, out)
    done = CliRunner().invoke(cli, ["report", str(readme_main_run.run_dir), "--out", str(out), "--no-audit"])
    assert done.exit_code == 0, done.output
    assert not out.is_symlink()
    assert target.read_text() == "keep me"


def test_report_embeds_rendered_episodes_checked_against_their_record(
    readme_main_run: MainJobRun, tmp_path: Path
) -> None:
    out = tmp_path / "drawn.html"
    args = ["report", str(readme_main_run.run_dir), "--out", str(out), "--render-episodes", "2", "--no-isolation"]
    done = CliRunner().invoke(cli, [*args, "--no-audit", "--json"])
    assert done.exit_code == 0, done.output
    rendered = json.loads(done.output)["rendered"]
    assert len(rendered) == 2  # the selected Candidate's best and worst public Episodes
    assert all(title.startswith(f"{readme_main_run.run_dir.name}: train/") for title in rendered), rendered
    assert not any("DIFFERS" in title for title in rendered), rendered
    html = out.read_text(encoding="utf-8")
    assert html.count('src="data:image/gif;base64,') == 2


def test_report_isolation_flags_need_render_episodes(readme_main_run: MainJobRun, tmp_path: Path) -> None:
    done = CliRunner().invoke(
        cli, ["report", str(readme_main_run.run_dir), "--out", str(tmp_path / "r.html"), "--no-isolation"]
    )
    assert done.exit_code == 2, done.output
    assert "--render-episodes" in done.output
    assert not (tmp_path / "r.html").exists()


def test_the_leaderboard_tells_one_agent_with_two_models_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real Runs of one Agent with two models (--agent-option model=...): two leaderboard rows, never one average."""
    monkeypatch.chdir(tmp_path)
    small = ["--validation-episodes", "0", "--assessment-episodes", "2", "--episode-budget", "4", "-q"]
    for name, model in (("alpha-1", "alpha"), ("beta-1", "beta")):
        args = ["run", "frozen-lake", "--agent", "baseline", "--agent-option", f"model={model}", *small]
        made = CliRunner().invoke(cli, [*args, "--record-to", f"runs/{name}"])
        assert made.exit_code == 0, made.output
    shutil.copytree("runs/alpha-1", "runs/alpha-2", symlinks=True)
    done = CliRunner().invoke(cli, ["report", "runs/alpha-1", "runs/beta-1", "runs/alpha-2", "--out", "r.html", "-q"])
    assert done.exit_code == 0, done.output
    html = Path("r.html").read_text(encoding="utf-8")
    board = html.split('<table class="leaderboard">', 1)[1].split("</table>", 1)[0]
    assert board.count("<tr><td>") == 2, board
    assert "<tr><td>baseline (model=alpha)</td>" in board
    assert "<tr><td>baseline (model=beta)</td>" in board
    facts = html.split("</table>", 1)[1]  # each Run's facts, after the leaderboard
    assert facts.count("<td>baseline (model=alpha)</td>") == 2
    assert facts.count("<td>baseline (model=beta)</td>") == 1
