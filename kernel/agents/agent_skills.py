"""Agent Skills: read-only Markdown guides the Host places in the Agent's workspace, versioned and recorded.

The guides ship as package data in ``kernel/agents/skills/``: ``README.md`` (the protocol, the Feedback layout and
good experimental practice) and one ``<family>.md`` per Benchmark family (``classic-control``, ``toy-text``, ``toy``,
``box2d``, ``mujoco``, ``minigrid``, ``babyai``, ``highway``, ``crafter``, ``ale``, ``vizdoom``, ``retro``, ``nle``,
``dm-control``, ``robotics``, ``metaworld``, ``robosuite``) on what the observations mean and what tends to work.
A Run's Agent gets the general guide and its Benchmark family's guide (:func:`skills_for`).

They are recorded like the task text: :func:`skills_object` is one Object (canonical JSON of the
:data:`SKILLS_VERSION` and every file's text) whose digest ``agent-started`` carries as ``skills_digest``, so a Run
says exactly which guides its Agent saw and ``ledger verify`` checks their bytes.

:func:`place_skills` writes them to ``<workspace>/skills/`` with mode 0444 (the folder 0555), replacing whatever
the Agent left there without following a link; a sandboxed Agent additionally sees the folder through a read-only
bind. They never become part of a Program snapshot: the Host refuses a Program folder that contains them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Final

__all__ = [
    "GENERAL_SKILL",
    "SKILLS_DIR",
    "SKILLS_VERSION",
    "place_skills",
    "skill_families",
    "skills_for",
    "skills_object",
]

SKILLS_VERSION: Final = 1
"""The version of the shipped guides; raised whenever their text changes (the recorded Object says which)."""

SKILLS_DIR: Final = "skills"
"""The workspace folder that holds the guides."""

GENERAL_SKILL: Final = "README.md"
"""The general guide every Agent gets."""


def _shipped() -> dict[str, str]:
    folder = resources.files("evoledger.kernel.agents").joinpath("skills")
    return {entry.name: entry.read_text(encoding="utf-8") for entry in folder.iterdir() if entry.name.endswith(".md")}


def skill_families() -> list[str]:
    """The Benchmark families that have a guide of their own, sorted."""
    return sorted(name.removesuffix(".md") for name in _shipped() if name != GENERAL_SKILL)


def skills_for(family: str | None) -> dict[str, str]:
    """The guides an Agent of a Benchmark in ``family`` gets: the general one, and its family's when there is one."""
    shipped = _shipped()
    chosen = {GENERAL_SKILL: shipped[GENERAL_SKILL]}
    if family is not None and f"{family}.md" in shipped and family != GENERAL_SKILL.removesuffix(".md"):
        chosen[f"{family}.md"] = shipped[f"{family}.md"]
    return chosen


def skills_object(files: Mapping[str, str]) -> bytes:
    """The bytes the ledger stores for a set of guides: ``{"files": {name: text}, "version": SKILLS_VERSION}``."""
    body = {"files": dict(sorted(files.items())), "version": SKILLS_VERSION}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def place_skills(workspace: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` to ``workspace/skills/`` (files 0444, folder 0555) and return the folder.

    Whatever is at ``workspace/skills`` is replaced: a link or file is removed (never followed), a folder is emptied
    (links inside are removed, not followed). Files are created relative to a descriptor of the folder with
    ``O_NOFOLLOW | O_EXCL``.
    """
    folder = Path(workspace) / SKILLS_DIR
    _remove(folder)
    os.mkdir(folder, 0o700)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name, text in sorted(files.items()):
            if "/" in name or name in ("", ".", ".."):
                raise ValueError(f"a guide name must be a plain file name, got {name!r}")
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444, dir_fd=fd)
            with os.fdopen(out, "wb") as handle:
                handle.write(text.encode("utf-8"))
        os.fchmod(fd, 0o555)
    finally:
        os.close(fd)
    return folder


def _remove(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    for root, dirs, _ in os.walk(path):  # read-only folders (an earlier placement) cannot be emptied otherwise
        for folder in (root, *(os.path.join(root, name) for name in dirs)):
            if not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)
    shutil.rmtree(path)
