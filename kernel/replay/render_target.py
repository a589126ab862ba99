"""Naming one recorded Episode for ``evoledger replay --render``, and finding the Episodes of a Run by name.

An Episode is named the way an export's ``episode_id`` spells its middle part, ``SPLIT/SUBMISSION/INDEX``:

* ``train/submission-000002/4``: pool Episode 4 as Submission 2 ran it (``submission-000002/4`` for short, the
  Agent's own view: the Submission and the pool index it selected with ``--episodes``);
* ``validation/submission-000003/0``, ``assessment/submission-000003/7``: host-only Episodes of a Candidate;
* an export's ``episode_id`` (``cartpole-0/train/submission-000004/17/1@3b54855e62c3d1f0``: its Run id, attempt
  and Event hash are not checked);
* a trajectory digest or a prefix of it (``sha256:3f1c0e4b`` or ``3f1c0e4b``, at least 6 hex digits), as
  ``replay --execute`` findings print it.

Training Episodes are public; Validation and Assessment Episodes are host-only and are found only with
``visibility="all"`` (``--visibility all``). A name that matches nothing, or matches Episodes with different
trajectories, raises :class:`EpisodeNameError` listing what exists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

from evoledger.kernel.replay.execution_check import RecordedEpisode
from evoledger.kernel.session.selectors import format_selector
from evoledger.ledger.errors import InputError

__all__ = [
    "VISIBILITIES",
    "EpisodeNameError",
    "Visibility",
    "check_visibility",
    "episode_name",
    "find_episode",
    "visible_episodes",
]

Visibility = Literal["public", "all"]
VISIBILITIES: Final[tuple[Visibility, ...]] = ("public", "all")
MIN_DIGEST_PREFIX: Final = 6
_NAME: Final = re.compile(
    r"(?:(?:[A-Za-z0-9][A-Za-z0-9._-]{0,127}/)?(train|validation|assessment)/)?"  # [RUN/]SPLIT/
    r"(submission-[0-9]{6,})/([0-9]+)"
    r"(?:/[0-9]+@[0-9a-f]{1,64})?"  # an export's /ATTEMPT@EVENT-HASH
).fullmatch
_HEX: Final = re.compile(r"(?:sha256:)?([0-9a-f]+)").fullmatch
_LISTED: Final = 12
"""How many Submissions' Episode lists an error message spells out."""


class EpisodeNameError(InputError, LookupError):
    """``--render EPISODE`` names no Episode the caller may see, or several different ones."""


def episode_name(episode: RecordedEpisode) -> str:
    """The canonical name of ``episode``: ``SPLIT/SUBMISSION/INDEX``."""
    return f"{episode.split}/{episode.owner}/{episode.index}"


def check_visibility(visibility: str) -> Visibility:
    """``visibility`` when it is ``public`` or ``all``; else an :class:`InputError` naming both."""
    if visibility not in VISIBILITIES:
        raise InputError(f"--visibility {visibility!r} is not one of: {', '.join(VISIBILITIES)}")
    return visibility


def visible_episodes(episodes: Sequence[RecordedEpisode], visibility: Visibility) -> list[RecordedEpisode]:
    """The Episodes a caller of ``visibility`` may render (training ones only, unless ``all``)."""
    return [e for e in episodes if visibility == "all" or e.split == "train"]


def _listing(episodes: Sequence[RecordedEpisode]) -> str:
    groups: dict[tuple[str, str], set[int]] = {}
    for e in episodes:
        groups.setdefault((e.split, e.owner), set()).add(e.index)
    parts = [f"{split}/{owner}/{format_selector(sorted(indices))}" for (split, owner), indices in groups.items()]
    more = f" and {len(parts) - _LISTED} more Submissions" if len(parts) > _LISTED else ""
    return "; ".join(parts[:_LISTED]) + more if parts else "(none)"


def _matches(name: str, episodes: Sequence[RecordedEpisode]) -> list[RecordedEpisode] | None:
    """The Episodes ``name`` names (``None``: ``name`` is not an Episode name at all)."""
    named = _NAME(name)
    if named is not None:
        split = named.group(1) or "train"
        owner, index = named.group(2), int(named.group(3))
        return [e for e in episodes if (e.split, e.owner, e.index) == (split, owner, index)]
    digest = _HEX(name.lower())
    if digest is not None and len(digest.group(1)) >= MIN_DIGEST_PREFIX:
        prefix = "sha256:" + digest.group(1)
        return [e for e in episodes if e.trajectory_digest.startswith(prefix)]
    return None


def find_episode(name: str, episodes: Sequence[RecordedEpisode], visibility: Visibility) -> RecordedEpisode:
    """The one Episode ``name`` names among ``episodes`` (every recorded one), as ``visibility`` may see it.

    Episodes recorded as infra faults are left out (nothing ran to the end to show) unless nothing else matches.
    When several Episodes match they must share one trajectory (the same run of the same Program, e.g. two
    Submissions of one Program on one pool Episode); the first is returned.
    """
    matches = _matches(name.strip(), episodes)
    shown = visible_episodes(episodes, visibility)
    hidden = len(episodes) - len(shown)
    hint = (
        f" ({hidden} host-only Validation/Assessment Episodes are not listed; pass --visibility all to see them)"
        if hidden
        else ""
    )
    if matches is None:
        raise EpisodeNameError(
            f"--render {name!r} is not an Episode name: give SPLIT/SUBMISSION/INDEX (e.g. train/submission-000001/0), "
            f"SUBMISSION/INDEX for a training Episode, or a trajectory digest prefix of at least {MIN_DIGEST_PREFIX} "
            f"hex digits. Episodes of this Run: {_listing(shown)}{hint}"
        )
    allowed = visible_episodes(matches, visibility)
    if matches and not allowed:
        raise EpisodeNameError(
            f"--render {name!r} names a host-only {matches[0].split} Episode ({episode_name(matches[0])}); "
            "the Agent never saw it. Pass --visibility all to render it"
        )
    if not allowed:
        raise EpisodeNameError(
            f"--render {name!r} names no recorded Episode. Episodes of this Run: {_listing(shown)}{hint}"
        )
    complete = [e for e in allowed if e.status != "infra_fault"] or allowed
    digests = sorted({e.trajectory_digest for e in complete})
    if len(digests) > 1:
        listed = ", ".join(f"{episode_name(e)} ({e.trajectory_digest[:19]})" for e in complete[:_LISTED])
        raise EpisodeNameError(
            f"--render {name!r} names {len(complete)} Episodes with different trajectories: {listed}. "
            "Name one by SPLIT/SUBMISSION/INDEX or by a longer trajectory digest prefix"
        )
    return complete[0]
