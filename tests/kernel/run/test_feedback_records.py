"""The records a Run's ``feedback()`` sees: only those that carry a trajectory get their Host-private spec."""

from __future__ import annotations

from evoledger.kernel.authoring import EpisodeSpec, Trajectory
from evoledger.kernel.run.records import records_from_views
from evoledger.ledger.trajectories import encode_trajectory
from evoledger.projections.run_state import EpisodeView

_TRAJECTORY = encode_trajectory(Trajectory([0, 1], [1], [1.0], True, False))


class _Objects:
    def get(self, digest: str) -> bytes:
        assert digest == "sha256:t"
        return _TRAJECTORY


def _views() -> list[tuple[int, EpisodeView]]:
    traced = EpisodeView("ok", 1.0, 1, terminated=True, trajectory_digest="sha256:t")
    return [(2, traced), (5, EpisodeView("timeout", 0.0, 0)), (7, traced), (9, traced)]


def test_specs_go_only_to_records_that_carry_a_trajectory() -> None:
    specs = {i: EpisodeSpec(split="train", index=i, seed=1000 + i) for i in (2, 5, 7, 9)}
    records = records_from_views("train", _views(), _Objects(), traces=3, specs=specs)
    assert [(r.index, r.trajectory is not None, r.episode) for r in records] == [
        (2, True, specs[2]),
        (5, False, None),  # no trajectory recorded
        (7, True, specs[7]),
        (9, False, None),  # past the traced records
    ]


def test_without_specs_no_record_has_one() -> None:
    records = records_from_views("validation", _views(), _Objects(), traces=0)
    assert all(r.episode is None and r.trajectory is None for r in records)
