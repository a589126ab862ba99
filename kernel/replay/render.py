"""``evoledger replay RUN --render EPISODE --out F``: one recorded Episode re-executed and drawn.

:func:`render_recorded_episode` finds the Episode by name (:mod:`~evoledger.kernel.replay.render_target`),
re-executes it exactly as ``replay --execute`` does (its Program snapshot from the ledger, its Host seeds from
``episode-planned``, the Run's Policy limits, one worker of the real :class:`LocalExecutor`: the Policy runs in its
own process and never sees a frame), checks that the re-executed trajectory digest, return and status equal the
recorded ones, and then draws it:

* ``.gif`` / ``.mp4``: an animation of the states rendered on a rendering copy of the Environment in this process
  (:mod:`~evoledger.kernel.replay.render_frames`), with step, action, reward and return overlaid; at most
  ``max_frames`` states, evenly spread (the reset and the last always among them);
* ``.png``: a chart of reward per step and return so far; also what ``.gif`` gives (as a one-frame GIF) for a
  Benchmark without a renderer (the toy ones, anything whose Environment has no ``rgb_array`` render);
* ``.txt``: a plain-text trace, one line per step.

A mismatch with the record raises :class:`RenderMismatchError` and writes nothing (``strict=False`` draws the
re-executed Episode instead, with a warning on every frame and ``matches_recording`` false).
:func:`episodes_worth_rendering` picks a few Episodes of a Run worth showing (for ``evoledger report``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, bounded_limits
from evoledger.kernel.registry import resolve_recorded
from evoledger.kernel.replay.execution_check import RecordedEpisode, recorded_episodes
from evoledger.kernel.replay.frame_overlay import (
    GifAnimation,
    Mp4Animation,
    overlaid,
    scaled_size,
    trace_chart,
    trace_text,
)
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.render_frames import (
    Frame,
    NoRenderer,
    RenderMismatchError,
    render_frames,
    sample_states,
)
from evoledger.kernel.replay.render_target import check_visibility, episode_name, find_episode, visible_episodes
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.private_copies import ProgramCache
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import InfraError, InputError, LedgerError, SchemaError
from evoledger.ledger.events import CandidateSelected, EpisodePlanned, from_stored
from evoledger.ledger.records import StoredEvent
from evoledger.ledger.trajectories import Trajectory, decode_trajectory

__all__ = [
    "DEFAULT_FPS",
    "DEFAULT_MAX_FRAMES",
    "DEFAULT_WIDTH",
    "FORMATS",
    "MAX_BYTES",
    "RenderFormat",
    "RenderedEpisode",
    "episodes_worth_rendering",
    "render_format",
    "render_recorded_episode",
]

RenderFormat = Literal["gif", "mp4", "png", "txt"]
FORMATS: Final[dict[RenderFormat, str]] = {
    "gif": "image/gif",
    "mp4": "video/mp4",
    "png": "image/png",
    "txt": "text/plain",
}
DEFAULT_MAX_FRAMES: Final = 200
MAX_FRAMES: Final = 2000
DEFAULT_WIDTH: Final = 320
DEFAULT_FPS: Final = 20
MAX_BYTES: Final = 32 * 1024 * 1024
"""A render larger than this is refused (with the options that make it smaller)."""
MAX_PIXELS: Final = 120_000_000
"""The most pixels an animation's frames may hold in all (its frames are kept until it is encoded)."""


@dataclass(frozen=True, slots=True)
class RenderedEpisode:
    """One drawn Episode: what it shows, its bytes, and how it compares with the record."""

    episode: str
    """The Episode's canonical name, ``SPLIT/SUBMISSION/INDEX``."""
    media_type: str
    """``image/gif``, ``video/mp4``, ``image/png`` or ``text/plain``."""
    kind: Literal["animation", "chart", "text"]
    data: bytes
    frames: int
    """Frames of the animation (1 for a chart, 0 for text)."""
    steps: int
    episode_return: float
    status: str
    trajectory_digest: str
    """The recorded trajectory digest."""
    rerun_digest: str
    """The re-executed trajectory's digest (equal to ``trajectory_digest`` when ``matches_recording``)."""
    matches_recording: bool
    note: str
    """Why a chart stands in for an animation (no renderer), else empty."""


def render_format(out: Path | None, fmt: str | None) -> RenderFormat:
    """The format of a render written to ``out`` (its suffix) or asked for as ``fmt``; GIF when neither says."""
    suffix = None if out is None else out.suffix.lower().removeprefix(".")
    if suffix is not None and suffix not in FORMATS:
        raise InputError(
            f"--out {out} must end in .gif or .mp4 (an animation), .png (a reward chart) or .txt (a text trace)"
        )
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"format {fmt!r} is not one of: {', '.join(FORMATS)}")
    if suffix is not None and fmt is not None and suffix != fmt:
        raise InputError(f"--out {out} ends in .{suffix} but the format asked for is {fmt}; make them agree")
    return suffix or fmt or "gif"


def _bounded(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"--{name} {value!r} must be an integer from {low} to {high}")
    return value


def _planned(record: RunRecord, episode: RecordedEpisode) -> tuple[EpisodeSpec, int]:
    for seq, kind, version, visibility, payload, prev_hash, digest, recorded_at in record.rows:
        if kind != "episode-planned":
            continue
        event = from_stored(StoredEvent(seq, kind, version, visibility, payload, prev_hash, digest, recorded_at))
        if (
            isinstance(event, EpisodePlanned)
            and event.evaluation_id is None
            and (event.split, event.index) == (episode.split, episode.index)
        ):
            spec = EpisodeSpec(
                split=episode.split, index=episode.index, seed=event.env_seed, scenario=dict(event.scenario) or None
            )
            return spec, event.policy_seed
    raise SchemaError(
        f"{episode_name(episode)} has no episode-planned seeds in the log: it cannot be re-executed "
        "(`evoledger replay RUN` says why)"
    )


def _config(record: RunRecord) -> RunConfig:
    if record.config is None:
        why = record.config_error or "the log has no run-created Event"
        raise LedgerError(f"cannot re-execute an Episode of {record.layout.root}: {why}")
    return record.config


def _rerun(
    record: RunRecord, config: RunConfig, target: RecordedEpisode, spec: EpisodeSpec, policy_seed: int, **how: object
) -> EpisodeOutcome:
    with tempfile.TemporaryDirectory(prefix="evoledger-render-") as tmp:
        program = ProgramCache(Path(tmp), record.objects).materialize(target.program_digest)
        task = EpisodeTask(
            episode=spec, program_dir=program, policy_seed=policy_seed, limits=bounded_limits(config.limits)
        )
        with LocalExecutor(
            config.benchmark,
            workers=1,
            isolation=str(how["isolation"]),
            allow_import=bool(how["trust_benchmark"]),
            policy_abi=config.policy_abi,  # the recorded one: the Program was written to it
        ) as executor:
            (outcome,) = executor.run([task])
    if outcome.status == "infra_fault":
        raise InfraError(f"{episode_name(target)} could not be re-executed (infra fault: {outcome.failure_message})")
    return outcome


def _write(out: Path, data: bytes) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _animate(
    fmt: RenderFormat,
    render: Callable[[Callable[[Frame], None]], int],
    *,
    steps: int,
    states: int,
    width: int,
    fps: int,
    warning: str | None,
) -> tuple[bytes, int]:
    """The animation's bytes and frame count; ``render(on_frame)`` renders the frames (raises :class:`NoRenderer`)."""
    animation: GifAnimation | Mp4Animation | None = None

    def add(frame: Frame) -> None:
        nonlocal animation
        if animation is None:  # the first frame tells the size of all: refuse before holding too many
            size = scaled_size(frame.pixels.shape[1], frame.pixels.shape[0], width)
            if states * size[0] * size[1] > MAX_PIXELS:
                raise InputError(
                    f"{states} frames of {size[0]}x{size[1]} pixels are over the {MAX_PIXELS} pixels a render may "
                    "hold; lower --max-frames or --width"
                )
            animation = GifAnimation(fps) if fmt == "gif" else Mp4Animation(fps)
        animation.add(overlaid(frame, steps, width, warning=warning))

    try:
        frames = render(add)
        if animation is None:
            raise NoRenderer("it rendered no frame")
        return animation.finish(), frames
    finally:
        if animation is not None:
            animation.close()


def _draw(
    fmt: RenderFormat,
    title: str,
    trajectory: Trajectory,
    render: Callable[[Callable[[Frame], None]], int],
    *,
    states: int,
    width: int,
    fps: int,
    warning: str | None,
) -> tuple[bytes, Literal["animation", "chart", "text"], int, str]:
    """``(data, kind, frames, note)``; ``render(on_frame)`` renders the frames of an animation."""
    if fmt == "txt":
        header = [title] + ([warning] if warning else [])
        return trace_text(header, trajectory.actions, trajectory.rewards), "text", 0, ""
    note = ""
    if fmt in ("gif", "mp4"):
        try:
            data, frames = _animate(
                fmt, render, steps=trajectory.steps, states=states, width=width, fps=fps, warning=warning
            )
        except NoRenderer as exc:
            if fmt == "mp4":
                raise InputError(
                    f"this Benchmark cannot render here ({exc}); write --out with .gif or .png for a reward chart, or "
                    ".txt for a text trace"
                ) from None
            note = f"no renderer here ({exc}): a chart of reward per step and return so far"
        else:
            return data, "animation", frames, ""
    chart_note = "; ".join(part for part in (warning, note or "reward per step and return so far") if part)
    return trace_chart(title, trajectory.rewards, note=chart_note, image_format=fmt.upper()), "chart", 1, note


def render_recorded_episode(
    run_dir: Path,
    episode: str,
    out: Path | None = None,
    *,
    fmt: RenderFormat | None = None,
    visibility: str = "public",
    max_frames: int = DEFAULT_MAX_FRAMES,
    width: int = DEFAULT_WIDTH,
    fps: int = DEFAULT_FPS,
    isolation: str = "auto",
    trust_benchmark: bool = False,
    strict: bool = True,
) -> RenderedEpisode:
    """Re-execute the recorded Episode ``episode`` of ``run_dir`` and draw it (see the module docstring).

    The format is ``out``'s suffix, else ``fmt``, else GIF; ``out`` (when given) is written atomically, and only
    when everything succeeded. ``visibility="all"`` lets Validation and Assessment Episodes be named.
    ``isolation`` is what the Policy re-runs under (see ``replay --execute``); ``trust_benchmark`` lets a
    Benchmark the record names by import string be imported. Raises :class:`EpisodeNameError` for an unknown,
    hidden or ambiguous name, :class:`RenderMismatchError` when the re-execution does not reproduce the record
    (unless ``strict`` is false), and an ``InputError`` for a render over :data:`MAX_BYTES`.
    """
    chosen = render_format(out, fmt)
    seen = check_visibility(visibility)
    max_frames = _bounded("max-frames", max_frames, 2, MAX_FRAMES)
    width = _bounded("width", width, 64, 1280)
    fps = _bounded("fps", fps, 1, 60)
    with open_record(run_dir) as record:
        config = _config(record)
        episodes, _ = recorded_episodes(record)
        target = find_episode(episode, episodes, seen)
        name = episode_name(target)
        if target.status == "infra_fault":
            raise InputError(f"{name} was recorded as an infra fault: no Episode ran to show; pick another")
        spec, policy_seed = _planned(record, target)
        benchmark = resolve_recorded(config.benchmark, trusted=trust_benchmark)
        outcome = _rerun(
            record, config, target, spec, policy_seed, isolation=isolation, trust_benchmark=trust_benchmark
        )
    rerun_digest = digest_of(outcome.trajectory or b"")
    matches = (rerun_digest, outcome.episode_return, outcome.status) == (
        target.trajectory_digest,
        target.episode_return,
        target.status,
    )
    if not matches and strict:
        raise RenderMismatchError(
            f"{name} did not reproduce: recorded trajectory {target.trajectory_digest} (return "
            f"{target.episode_return}, {target.status}), re-executed {rerun_digest} (return {outcome.episode_return}, "
            f"{outcome.status}). The Benchmark or the Policy is not deterministic in its seeds, or the record does "
            "not describe what ran; nothing was written"
        )
    if outcome.trajectory is None:
        raise InfraError(f"{name}: the re-execution recorded no trajectory")
    trajectory = decode_trajectory(outcome.trajectory)
    warning = None if matches else "re-run differs from the record"
    title = f"{name} | {outcome.status} | return {outcome.episode_return:.4g} | {trajectory.steps} steps"
    wanted = frozenset(sample_states(trajectory.steps, max_frames))
    data, kind, frames, note = _draw(
        chosen,
        title,
        trajectory,
        lambda on_frame: render_frames(
            benchmark, spec, trajectory, ended_ok=outcome.status == "ok", wanted=wanted, on_frame=on_frame
        ),
        states=len(wanted),
        width=width,
        fps=fps,
        warning=warning,
    )
    if len(data) > MAX_BYTES:
        raise InputError(
            f"the render of {name} is {len(data)} bytes, over the {MAX_BYTES} allowed; lower --max-frames "
            f"({max_frames}) or --width ({width})"
        )
    if out is not None:
        _write(out, data)
    return RenderedEpisode(
        episode=name,
        media_type=FORMATS[chosen],
        kind=kind,
        data=data,
        frames=frames,
        steps=trajectory.steps,
        episode_return=outcome.episode_return,
        status=outcome.status,
        trajectory_digest=target.trajectory_digest,
        rerun_digest=rerun_digest,
        matches_recording=matches,
        note=note,
    )


def _selected(record: RunRecord) -> str | None:
    chosen = None
    for seq, kind, version, visibility, payload, prev_hash, digest, recorded_at in record.rows:
        if kind == "candidate-selected":
            event = from_stored(StoredEvent(seq, kind, version, visibility, payload, prev_hash, digest, recorded_at))
            if isinstance(event, CandidateSelected):
                chosen = event.submission_id
    return chosen


def episodes_worth_rendering(run_dir: Path, count: int, *, visibility: str = "public") -> list[str]:
    """Names of up to ``count`` Episodes of ``run_dir`` worth drawing: the best and worst of one Submission.

    The Submission is the selected Candidate (else the one with the best mean training return). With
    ``visibility="public"`` its training Episodes are picked from, with ``"all"`` its Assessment Episodes when it
    has any; alternately the highest and the lowest return (ties: lower index first), never one recorded as an
    infra fault.
    """
    seen = check_visibility(visibility)
    if count < 1:
        return []
    with open_record(run_dir) as record:
        episodes = [e for e in visible_episodes(recorded_episodes(record)[0], seen) if e.status != "infra_fault"]
        owner = _selected(record)
    if owner is None or not any(e.owner == owner for e in episodes):
        means: dict[str, list[float]] = {}
        for e in episodes:
            if e.split == "train":
                means.setdefault(e.owner, []).append(e.episode_return)
        if not means:
            return []
        owner = max(means, key=lambda o: (sum(means[o]) / len(means[o]), o))
    own = [e for e in episodes if e.owner == owner]
    pool = [e for e in own if e.split == "assessment"] or [e for e in own if e.split == "train"] or own
    ranked = sorted(pool, key=lambda e: (-e.episode_return, e.index))
    picked: list[str] = []
    low, high = 0, len(ranked) - 1
    while low <= high and len(picked) < count:
        picked.append(episode_name(ranked[low]))
        low += 1
        if low <= high and len(picked) < count:
            picked.append(episode_name(ranked[high]))
            high -= 1
    return picked
