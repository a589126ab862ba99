"""Visual evidence: rendered frames of a few training Episodes, published as bulk PNG contact sheets.

A Benchmark whose Environment can render (``render_mode="rgb_array"``) opts in with a :class:`VisualEvidence`
(for a gymnasium Benchmark: ``GymTask(..., visual_evidence=VisualEvidence())``). Its training Feedback then gains,
for each of the first few Episodes that carry a trajectory, a ``frames/episode-NNNN.png`` Artifact (retention
``bulk``): a contact sheet of sampled frames (the reset frame, step 1, an even stride, the last frame; at most
:data:`MAX_FRAMES`), each tile downscaled and captioned with its step ``t``, the return so far ``R``, and the action
``a`` and reward ``r`` that led to it. ``content["visual_evidence"]`` lists the sheets with their steps and says in
``notes`` why any Episode has none.

How the frames are made, and what that guarantees:

* **In the Host, never near the Policy.** Nothing renders while a Policy runs. When the Host computes a
  Submission's Feedback it re-simulates the Episode open-loop on a separate Environment made with
  ``render_mode="rgb_array"``, from the Episode's own seed (:attr:`EpisodeRecord.episode`, which the Host gives only
  to training records that carry a trajectory) and the recorded actions. Validation and Assessment records never
  have a spec, so they are never rendered; nor are ``evaluate()`` records.
* **Only frames of what happened.** Every reward, where the Episode ends (and whether it terminated), and the
  observation at every sampled frame must equal the recorded ones; otherwise (an Environment that is not
  deterministic from its seed) the Episode gets a note instead of frames that would mislead.
* **Fail-soft.** A missing renderer (no pygame, no OpenGL for MuJoCo, no Pillow) or a renderer that raises becomes a
  note in the content; it is never an infra fault and never the Policy's failure, and the score is unaffected.
  A renderer that failed is not tried again in the process (MuJoCo aborts the process on a second OpenGL start
  after a failed one): later Feedback repeats the same note.
* **What runs in the Host.** The re-simulation steps the Policy's recorded actions in the Host process; each
  already ran in a worker without an infra fault (Episodes with one are never re-simulated), on an Environment
  made as the worker's was (the Benchmark's ``make_environment``), only with ``render_mode`` set.
* **Bounded and deterministic.** At most :attr:`VisualEvidence.episodes` sheets of at most
  :attr:`VisualEvidence.frames` tiles, :attr:`VisualEvidence.max_steps` re-simulated steps per Feedback (an
  Episode that does not fit is skipped with a note, decided before it runs) and :data:`MAX_SHEET_BYTES` per sheet.
  The same records give the same bytes (Pillow's fixed bitmap font, PNG without metadata), as long as the renderer
  is deterministic; a wall-clock guard (:attr:`VisualEvidence.max_seconds`) stops a renderer that is far slower
  than expected, and only then may two computations differ.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, Protocol

import numpy as np
from evoledger.kernel.authoring import (
    CAPTION_CHAR_WIDTH,
    Artifact,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    NotAFrame,
    Step,
    action_caption,
    fit_caption,
    rgb_frame,
    same_observation,
)
from evoledger.ledger.errors import ConfigError

__all__ = [
    "MAX_FRAMES",
    "MAX_SHEET_BYTES",
    "RenderingEnvironment",
    "VisualEvidence",
    "add_visual_evidence",
    "sample_steps",
]

MAX_FRAMES: Final = 42
"""The most tiles a contact sheet may have (one Episode)."""
MAX_EPISODES: Final = 8
"""The most Episodes one Feedback may render."""
MAX_SHEET_BYTES: Final = 2 * 1024 * 1024
"""A sheet larger than this is left out with a note."""
_CAPTION_LINE: Final = 12
_HEADER: Final = 16
_PAD: Final = 2
_BACKGROUND: Final = (24, 24, 24)
_TEXT: Final = (235, 235, 235)

_UNAVAILABLE: dict[str, str] = {}
"""Renderer families that failed in this process, with why. Never tried again here: a second try after a failed
OpenGL start can abort the whole process (MuJoCo without GL does), and the Host must survive its Feedback."""


@dataclass(frozen=True, slots=True)
class VisualEvidence:
    """How a Benchmark renders training Episodes into contact sheets (see the module docstring).

    ``render_kwargs`` go to the rendering copy of the Environment only (e.g. MuJoCo's ``width``, ``height``,
    ``camera_id``); they are not Environment parameters and never reach the Policy or the spec.
    """

    episodes: int = 3
    frames: int = 16
    tile_width: int = 160
    max_steps: int = 5_000
    max_seconds: float = 10.0
    render_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limits = {
            "episodes": (self.episodes, 1, MAX_EPISODES),
            "frames": (self.frames, 3, MAX_FRAMES),
            "tile_width": (self.tile_width, 32, 640),
            "max_steps": (self.max_steps, 1, 1_000_000),
        }
        for name, (value, low, high) in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(f"VisualEvidence {name}={value!r} must be an integer between {low} and {high}")
        if not (isinstance(self.max_seconds, int | float) and math.isfinite(self.max_seconds) and self.max_seconds > 0):
            raise ConfigError(f"VisualEvidence max_seconds={self.max_seconds!r} must be a positive number of seconds")
        if "render_mode" in self.render_kwargs:
            raise ConfigError("VisualEvidence render_kwargs must not set render_mode; it is always 'rgb_array'")


class RenderingEnvironment(Protocol):
    """An Environment that can also ``render()`` an RGB frame (height x width x 3 uint8) of its current state."""

    def reset(self) -> Any: ...

    def step(self, action: Any) -> Step: ...

    def render(self) -> Any: ...

    def close(self) -> None: ...


class _Frame(NamedTuple):
    step: int
    pixels: np.ndarray[Any, np.dtype[np.uint8]]
    action: Any
    reward: float | None
    episode_return: float


class _NoRenderer(Exception):
    """Rendering is unavailable here (no renderer, no GL, a renderer that raises): stop trying."""


def sample_steps(steps: int, frames: int) -> tuple[int, ...]:
    """The states to show of an Episode of ``steps`` steps: 0 (reset), 1, an even stride and ``steps`` (the last).

    Every state when there are at most ``frames`` of them.

    >>> sample_steps(3, 16)
    (0, 1, 2, 3)
    >>> sample_steps(100, 6)
    (0, 1, 25, 50, 75, 100)
    """
    if frames < 3:
        raise ValueError(f"frames={frames}: a sheet needs at least 3 (reset, step 1, last)")
    if steps + 1 <= frames:
        return tuple(range(steps + 1))
    stride = [round(i * steps / (frames - 2)) for i in range(frames - 1)]  # from 0 to steps; one tile left for 1
    return tuple(sorted({1, *stride}))


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def _render(env: RenderingEnvironment) -> np.ndarray[Any, np.dtype[np.uint8]]:
    try:
        frame = env.render()
    except Exception as exc:  # any renderer failure (no GL, no display, ...) means: no frames here
        raise _NoRenderer(_describe(exc)) from None
    try:
        return rgb_frame(frame)
    except NotAFrame as exc:
        raise _NoRenderer(str(exc)) from None


def _resimulate(
    record: EpisodeRecord,
    env: RenderingEnvironment,
    wanted: frozenset[int],
    deadline: float,
    clock: Callable[[], float],
) -> list[_Frame] | str:
    """The sampled frames of ``record`` re-simulated on ``env``, or why there are none."""
    trajectory = record.trajectory
    assert trajectory is not None  # checked by the caller
    observations = trajectory.observations
    disagree = "not rendered: its re-simulation disagrees with the recorded trajectory at step {} (the Environment is "
    disagree += "not deterministic from its seed), so its frames would mislead"
    try:
        observation = env.reset()
    except Exception as exc:
        return f"not rendered: re-simulating its reset failed ({_describe(exc)})"
    if observations and not same_observation(observation, observations[0]):
        return disagree.format(0)
    frames = [_Frame(0, _render(env), None, None, 0.0)] if 0 in wanted else []
    total = 0.0
    for t, action in enumerate(trajectory.actions):
        if clock() > deadline:
            return "not rendered: rendering took longer than the time allowed (VisualEvidence max_seconds)"
        try:
            step = env.step(action)
        except Exception as exc:
            return f"not rendered: re-simulating step {t + 1} failed ({_describe(exc)})"
        ended = step.terminated or step.truncated
        if float(step.reward) != float(trajectory.rewards[t]) or (ended and t + 1 < trajectory.steps):
            return disagree.format(t + 1)
        last = t + 1 == trajectory.steps  # the Host may truncate by itself at its step limit: compare terminated
        if last and record.status == "ok" and step.terminated != trajectory.terminated:
            return disagree.format(t + 1)
        shown = t + 1 in wanted or t + 1 == trajectory.steps
        if shown and t + 1 < len(observations) and not same_observation(step.observation, observations[t + 1]):
            return disagree.format(t + 1)
        total += float(step.reward)
        if t + 1 in wanted:
            frames.append(_Frame(t + 1, _render(env), action, float(step.reward), total))
    return frames


def _sheet(record: EpisodeRecord, frames: Sequence[_Frame], settings: VisualEvidence) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    height, width = frames[0].pixels.shape[:2]
    tile_w = min(settings.tile_width, width)
    tile_h = max(round(height * tile_w / width), 1)
    cols = math.ceil(math.sqrt(len(frames)))
    rows = math.ceil(len(frames) / cols)
    cell_w, cell_h = tile_w + 2 * _PAD, tile_h + 2 * _CAPTION_LINE + 2 * _PAD
    sheet = Image.new("RGB", (cols * cell_w, _HEADER + rows * cell_h), _BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default_imagefont()
    header = f"episode {record.index} | {record.status} | return {record.episode_return:.4g} | {record.steps} steps"
    draw.text((_PAD, 2), fit_caption(header, sheet.width - 2 * _PAD), fill=_TEXT, font=font)
    for position, frame in enumerate(frames):
        x = (position % cols) * cell_w + _PAD
        y = _HEADER + (position // cols) * cell_h + _PAD
        tile: Image.Image = Image.fromarray(frame.pixels, mode="RGB")
        if tile.size != (tile_w, tile_h):
            tile = tile.resize((tile_w, tile_h), Image.Resampling.BOX)
        sheet.paste(tile, (x, y))
        first = f"t={frame.step} R={frame.episode_return:.4g}"
        second = "reset" if frame.reward is None else f"r={frame.reward:.3g} a="
        if frame.reward is not None:
            second += action_caption(
                frame.action, max((tile_w - len(second) * CAPTION_CHAR_WIDTH) // CAPTION_CHAR_WIDTH, 1)
            )
        draw.text((x, y + tile_h + 1), fit_caption(first, tile_w), fill=_TEXT, font=font)
        draw.text((x, y + tile_h + 1 + _CAPTION_LINE), fit_caption(second, tile_w), fill=_TEXT, font=font)
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def _renderer_family(renderer: str) -> str:
    """The package of a gymnasium id's entry point (``gymnasium.envs.mujoco``), else ``renderer`` itself."""
    try:
        import gymnasium

        entry_point = gymnasium.spec(renderer).entry_point
    except Exception:  # not a registered gymnasium id
        return renderer
    if not isinstance(entry_point, str):
        return renderer
    module = entry_point.split(":", 1)[0]
    return module.rsplit(".", 1)[0] if "." in module else module


def _close(env: RenderingEnvironment) -> None:
    with contextlib.suppress(Exception):  # a renderer that fails to close must not turn Feedback into a fault
        env.close()


def add_visual_evidence(
    feedback: Feedback,
    records: Sequence[EpisodeRecord],
    settings: VisualEvidence,
    open_environment: Callable[[EpisodeSpec], RenderingEnvironment],
    *,
    renderer: str,
    clock: Callable[[], float] = time.monotonic,
) -> Feedback:
    """``feedback`` with contact sheets of the first renderable training Episodes of ``records`` added.

    ``open_environment(spec)`` makes a fresh rendering Environment for an Episode (``render_mode="rgb_array"``).
    Records without a spec or a trajectory (validation, assessment, ``evaluate()``, Episodes past the traced
    ones) are not rendered; when none is renderable ``feedback`` is returned unchanged. ``renderer`` names the
    renderer (a gymnasium id stands for its environment package, e.g. every ``gymnasium.envs.mujoco`` id shares
    one): once it fails in this process it is not tried again, and later Feedback repeats the same note.
    """
    chosen = [
        r
        for r in records
        if r.split == "train" and r.episode is not None and r.trajectory is not None and r.status != "infra_fault"
    ][: settings.episodes]
    if not chosen:
        return feedback
    sheets: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    artifacts: list[Artifact] = []
    try:
        import PIL.Image  # noqa: F401  (the contact sheets need Pillow)
    except ImportError:
        notes.append("no frames: Pillow is not installed here (pip install pillow)")
        chosen = []
    family = _renderer_family(renderer)
    budget = settings.max_steps
    deadline = clock() + settings.max_seconds
    for record in chosen:
        assert record.trajectory is not None
        assert record.episode is not None
        name = f"frames/episode-{record.index:04d}.png"
        steps = record.trajectory.steps
        if name in sheets or any(a.name == name for a in feedback.artifacts):
            continue
        if steps > budget:
            notes.append(
                f"episode {record.index}: not rendered: its {steps} steps exceed the {budget} steps left of this "
                f"Feedback's re-simulation budget ({settings.max_steps})"
            )
            continue
        budget -= steps
        wanted = frozenset(sample_steps(steps, settings.frames))
        if family in _UNAVAILABLE:
            notes.append(_UNAVAILABLE[family])
            break
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # renderers warn about displays they do not need
                env = open_environment(record.episode)
                try:
                    result = _resimulate(record, env, wanted, deadline, clock)
                finally:
                    _close(env)
        except Exception as exc:  # no renderer (pygame, GL) here, or one that raises
            reason = str(exc) if isinstance(exc, _NoRenderer) else _describe(exc)
            if "OpenGL" in reason:
                reason += "; MuJoCo renders headless with MUJOCO_GL=egl (or osmesa) set for the Host"
            _UNAVAILABLE[family] = f"no frames: rendering is unavailable here ({reason}); the score is unaffected"
            notes.append(_UNAVAILABLE[family])
            break
        if isinstance(result, str):
            notes.append(f"episode {record.index}: {result}")
            continue
        data = _sheet(record, result, settings)
        if len(data) > MAX_SHEET_BYTES:
            notes.append(
                f"episode {record.index}: not rendered: its sheet is {len(data)} bytes (over {MAX_SHEET_BYTES})"
            )
            continue
        artifacts.append(Artifact(name=name, media_type="image/png", data=data, retention="bulk"))
        sheets[name] = {"episode": record.index, "steps": [f.step for f in result]}
    evidence = {
        "about": "contact sheets of rendered frames (bulk Artifacts), re-simulated from the recorded actions; "
        "t = step, R = return so far, a and r = the action and reward that led to the frame",
        "sheets": sheets,
        "notes": notes,
    }
    return Feedback(
        score=feedback.score,
        content={**feedback.content, "visual_evidence": evidence},
        artifacts=(*feedback.artifacts, *artifacts),
    )
