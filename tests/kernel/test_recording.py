"""How Episodes are recorded: an infra fault is public and generic; its own account stays host-only."""

from __future__ import annotations

from pathlib import Path

from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.recording import PUBLIC_INFRA_REASON
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.store import Ledger


def test_an_infra_fault_keeps_its_detail_host_only(tmp_path: Path) -> None:
    program = tmp_path / "program"
    program.mkdir()
    (program / "policy.py").write_text(
        "def make_policy(context):\n    class P:\n        def act(self, o):\n            return 0\n    return P()\n",
        encoding="utf-8",
    )
    benchmark = BenchmarkRef(name="toy-counter", config={"infra_fault_indices": [1], "max_episode_steps": 3})
    result = evaluate(program, benchmark, config=EvaluationConfig(episodes=3), record_to=tmp_path / "record")
    assert [e.status for e in result.episodes] == ["ok", "infra_fault", "ok"]

    with Ledger.open(tmp_path / "record") as book:
        rows = list(book.records())
    kinds = [r.kind for r in rows]
    fault = kinds.index("infra-fault")
    assert kinds[fault + 1] == "infra-fault-detail"  # appended together, in one batch
    public, detail = rows[fault], rows[fault + 1]
    assert public.visibility == "public"
    assert public.data()["reason"].startswith(PUBLIC_INFRA_REASON)
    assert detail.visibility == "host"
    assert detail.data()["index"] == 1
    assert "fail_on_reset" in detail.data()["message"]  # the Environment's own words, kept for diagnosis
    assert not any(b"fail_on_reset" in r.payload for r in rows if r.visibility == "public")
