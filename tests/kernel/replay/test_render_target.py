"""Naming a recorded Episode for ``replay --render``: accepted spellings, visibility, unknown and ambiguous names."""

from __future__ import annotations

import pytest
from evoledger.kernel.replay.execution_check import RecordedEpisode
from evoledger.kernel.replay.render_target import EpisodeNameError, find_episode
from evoledger.ledger.errors import InputError


def _digest(n: int) -> str:
    """``sha256:`` and 64 hex digits: ``n`` in 2 digits repeated, or ``n`` in 8 digits then zeros when larger."""
    return "sha256:" + (f"{n:02x}" * 32 if n < 256 else f"{n:08x}".ljust(64, "0"))


def _episode(split: str, owner: int, index: int, trajectory: int, status: str = "ok") -> RecordedEpisode:
    program = _digest(200 + owner)
    return RecordedEpisode(0, split, index, f"submission-{owner:06d}", program, _digest(trajectory), 1.0, status)  # type: ignore[arg-type]


EPISODES = [
    _episode("train", 1, 0, 10),
    _episode("train", 1, 1, 11),
    _episode("train", 2, 0, 10),  # the same trajectory as Submission 1's Episode 0 (the same Program)
    _episode("train", 2, 1, 12, "infra_fault"),
    _episode("train", 2, 1, 13),  # its retry
    _episode("train", 3, 4, 0xAB),
    _episode("train", 3, 5, 0xAC),
    _episode("validation", 2, 0, 20),
    _episode("assessment", 2, 3, 30),
]


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("train/submission-000001/1", ("train", 1, 1)),
        ("submission-000001/1", ("train", 1, 1)),
        ("cartpole-0/train/submission-000003/4/1@3b54855e62c3d1f0", ("train", 3, 4)),  # an export's episode_id
        ("submission-000002/1", ("train", 2, 1)),  # the retry, not the infra fault
        (_digest(11)[:15], ("train", 1, 1)),
        ("0b0b0b0b", ("train", 1, 1)),
        (_digest(10), ("train", 1, 0)),  # two Episodes, one trajectory: the first
    ],
)
def test_accepted_names(name: str, found: tuple[str, int, int]) -> None:
    episode = find_episode(name, EPISODES, "public")
    assert (episode.split, int(episode.owner.rsplit("-", 1)[1]), episode.index) == found


def test_host_only_episodes_are_found_only_with_visibility_all() -> None:
    with pytest.raises(EpisodeNameError, match=r"host-only assessment Episode .* --visibility all"):
        find_episode("assessment/submission-000002/3", EPISODES, "public")
    with pytest.raises(EpisodeNameError, match="host-only"):
        find_episode(_digest(20)[:12], EPISODES, "public")  # not by digest either
    assert find_episode("assessment/submission-000002/3", EPISODES, "all").split == "assessment"


def test_unknown_names_list_what_exists_and_what_is_hidden() -> None:
    with pytest.raises(EpisodeNameError) as raised:
        find_episode("submission-000003/6", EPISODES, "public")
    message = str(raised.value)
    assert "names no recorded Episode" in message
    assert "train/submission-000001/0:2; train/submission-000002/0:2; train/submission-000003/4:6" in message
    assert "2 host-only Validation/Assessment Episodes are not listed; pass --visibility all" in message
    with pytest.raises(EpisodeNameError, match="not an Episode name"):
        find_episode("abc", EPISODES, "all")  # too short for a digest prefix
    assert isinstance(raised.value, InputError)
    assert raised.value.exit_code == 2


def test_a_prefix_of_several_trajectories_is_ambiguous() -> None:
    both = [_episode("train", 1, 0, 0xABCDEF), _episode("train", 3, 4, 0xABCDEE)]  # share the prefix "00abcde"
    with pytest.raises(EpisodeNameError, match="2 Episodes with different trajectories") as raised:
        find_episode("sha256:00abcde", both, "public")
    assert "train/submission-000003/4" in str(raised.value)
    assert find_episode("00abcdef", both, "public").owner == "submission-000001"
