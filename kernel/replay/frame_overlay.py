"""Turning rendered frames into an animation (GIF or MP4) with step, action and reward overlaid, or an Episode
without frames into a chart (PNG or a one-frame GIF) or a plain-text trace.

Every drawing uses Pillow's fixed bitmap font (``ImageFont.load_default_imagefont``), so the same frames give the
same bytes. A frame is scaled to the requested width, and a dark band across its top carries
``t=STEP/STEPS a=ACTION r=REWARD R=RETURN``. Pillow is needed for every picture (``pip install pillow``); MP4
also needs imageio with its ffmpeg binary (``pip install 'evoledger[video]'``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from evoledger.kernel.authoring import action_caption, fit_caption
from evoledger.kernel.replay.render_frames import Frame
from evoledger.ledger.errors import ConfigError, MissingExtraError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "BAND_HEIGHT",
    "GifAnimation",
    "Mp4Animation",
    "overlaid",
    "scaled_size",
    "trace_chart",
    "trace_text",
]

BAND_HEIGHT: Final = 13
"""Pixels of the caption band across the top of every frame."""
_BAND: Final = (16, 16, 16)
_TEXT: Final = (240, 240, 240)
_WARN: Final = (255, 96, 64)
_CHART_SIZE: Final = (480, 260)
_REWARD: Final = (70, 130, 220)
_RETURN: Final = (220, 120, 40)
_AXIS: Final = (90, 90, 90)
_ACTION_CHARS: Final = 24
"""The most characters of an action in a frame's band."""
_TRACE_ACTION_CHARS: Final = 200
"""The most characters of an action in a text trace."""


def _require_pillow() -> None:
    if importlib.util.find_spec("PIL") is None:
        raise ConfigError(
            "rendering an Episode draws with Pillow, which is not installed; install it with: pip install pillow"
        )


def scaled_size(raw_width: int, raw_height: int, width: int) -> tuple[int, int]:
    """The size of a ``raw_width`` x ``raw_height`` frame drawn ``width`` pixels wide (room for two bands at least)."""
    return width, max(round(raw_height * width / raw_width), 2 * BAND_HEIGHT + 2)


def overlaid(frame: Frame, steps: int, width: int, *, warning: str | None = None) -> Image:
    """``frame`` scaled to ``width`` pixels (height in proportion) with its caption band drawn over the top.

    ``warning``, when given, is drawn in a second band (red text) on every frame.
    """
    _require_pillow()
    from PIL import Image, ImageDraw, ImageFont

    height, raw_width = frame.pixels.shape[:2]
    size = scaled_size(raw_width, height, width)
    image = Image.fromarray(frame.pixels, mode="RGB")
    if image.size != size:
        resample = Image.Resampling.BOX if size[0] < raw_width else Image.Resampling.NEAREST
        image = image.resize(size, resample)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default_imagefont()
    if frame.reward is None:
        caption = f"t=0/{steps} reset"
    else:
        action = action_caption(frame.action, _ACTION_CHARS)
        caption = f"t={frame.step}/{steps} a={action} r={frame.reward:.3g} R={frame.episode_return:.4g}"
    draw.rectangle((0, 0, size[0] - 1, BAND_HEIGHT - 1), fill=_BAND)
    draw.text((2, 1), fit_caption(caption, size[0] - 4), fill=_TEXT, font=font)
    if warning:
        draw.rectangle((0, BAND_HEIGHT, size[0] - 1, 2 * BAND_HEIGHT - 1), fill=_BAND)
        draw.text((2, BAND_HEIGHT + 1), fit_caption(warning, size[0] - 4), fill=_WARN, font=font)
    return image


class GifAnimation:
    """An endlessly looping GIF built frame by frame (each kept as 1 byte a pixel, with its own adaptive palette)."""

    def __init__(self, fps: int) -> None:
        _require_pillow()
        self._fps = fps
        self._frames: list[Image] = []

    def add(self, image: Image) -> None:
        from PIL import Image

        self._frames.append(image.convert("P", palette=Image.Palette.ADAPTIVE, colors=255))

    def finish(self) -> bytes:
        buffer = io.BytesIO()
        self._frames[0].save(
            buffer,
            format="GIF",
            save_all=True,
            append_images=self._frames[1:],
            duration=max(round(1000 / self._fps), 20),
            loop=0,
            optimize=False,
        )
        return buffer.getvalue()

    def close(self) -> None:
        self._frames.clear()


class Mp4Animation:
    """An H.264 MP4 (yuv420p, sizes padded to even) streamed frame by frame to imageio's ffmpeg."""

    def __init__(self, fps: int) -> None:
        for module in ("imageio", "imageio_ffmpeg"):  # imageio_ffmpeg: the ffmpeg binary imageio writes MP4 with
            if importlib.util.find_spec(module) is None:
                raise MissingExtraError("writing an MP4", "video", module)
        fd, name = tempfile.mkstemp(prefix="evoledger-render-", suffix=".mp4")
        os.close(fd)
        self._path = Path(name)
        self._fps = fps
        self._writer: Any = None

    def add(self, image: Image) -> None:
        width, height = image.size
        if self._writer is None:
            import imageio.v2 as imageio

            self._writer = imageio.get_writer(
                self._path, format="FFMPEG", mode="I", fps=self._fps, codec="libx264", macro_block_size=1,
                pixelformat="yuv420p",
            )  # fmt: skip
        pixels = np.zeros((height + height % 2, width + width % 2, 3), dtype=np.uint8)
        pixels[:height, :width] = np.asarray(image.convert("RGB"))
        self._writer.append_data(pixels)

    def finish(self) -> bytes:
        self._writer.close()
        self._writer = None
        return self._path.read_bytes()

    def close(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
        self._path.unlink(missing_ok=True)


def trace_chart(title: str, rewards: Sequence[float], *, note: str, image_format: str) -> bytes:
    """A small chart of reward per step (bars) and return so far (line), as ``PNG`` or a one-frame ``GIF``."""
    _require_pillow()
    from PIL import Image, ImageDraw, ImageFont

    width, height = _CHART_SIZE
    image = Image.new("RGB", _CHART_SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default_imagefont()
    draw.text((6, 3), fit_caption(title, width - 12), fill=(0, 0, 0), font=font)
    draw.text((6, 16), fit_caption(note, width - 12), fill=_AXIS, font=font)
    left, top, right, bottom = 46, 34, width - 10, height - 34
    returns = np.cumsum(np.asarray(rewards, dtype=np.float64)) if len(rewards) else np.zeros(0)
    values = [0.0, *rewards, *returns.tolist()]
    low, high = min(values), max(values)
    if high - low < 1e-12:
        low, high = low - 1.0, high + 1.0

    def y_of(value: float) -> float:
        return float(bottom - (value - low) / (high - low) * (bottom - top))

    draw.rectangle((left, top, right, bottom), outline=_AXIS)
    draw.line((left, y_of(0.0), right, y_of(0.0)), fill=(200, 200, 200))
    draw.text((2, top - 4), f"{high:.3g}"[:7], fill=_AXIS, font=font)
    draw.text((2, bottom - 8), f"{low:.3g}"[:7], fill=_AXIS, font=font)
    steps = len(rewards)
    span = max(steps, 1)
    for t, reward in enumerate(rewards):
        x0 = left + 1 + t * (right - left - 2) / span
        x1 = max(x0, left + 1 + (t + 1) * (right - left - 2) / span - 1)
        draw.rectangle((x0, min(y_of(0.0), y_of(reward)), x1, max(y_of(0.0), y_of(reward))), fill=_REWARD)
    if steps:
        points = [(left + 1 + (t + 1) * (right - left - 2) / span, y_of(float(r))) for t, r in enumerate(returns)]
        draw.line([(left + 1, y_of(0.0)), *points], fill=_RETURN, width=2)
    draw.text((left, bottom + 4), f"step 0 .. {steps}", fill=_AXIS, font=font)
    draw.text((left, bottom + 17), "bars: reward per step", fill=_REWARD, font=font)
    draw.text((left + 150, bottom + 17), "line: return so far", fill=_RETURN, font=font)
    buffer = io.BytesIO()
    if image_format == "GIF":
        image.convert("P", palette=Image.Palette.ADAPTIVE, colors=64).save(buffer, format="GIF")
    else:
        image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def trace_text(header: Sequence[str], actions: Sequence[Any], rewards: Sequence[float]) -> bytes:
    """A plain-text trace: the ``header`` lines, then one line per step (step, action, reward, return so far)."""
    lines = [*(f"# {line}" for line in header), f"{'step':>6}  {'reward':>12}  {'return':>12}  action"]
    total = 0.0
    for t, (action, reward) in enumerate(zip(actions, rewards, strict=True), start=1):
        total += float(reward)
        lines.append(f"{t:>6}  {float(reward):>12.6g}  {total:>12.6g}  {action_caption(action, _TRACE_ACTION_CHARS)}")
    return ("\n".join(lines) + "\n").encode("utf-8")
