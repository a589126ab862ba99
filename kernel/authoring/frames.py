"""Frames from an Environment's renderer, re-simulated observations checked against recorded ones, and captions.

Both the Feedback's contact sheets (``benchmarks/visual_evidence.py``) and ``evoledger replay --render``
(``kernel/replay/render_frames.py``) step a Host-side Environment, made with ``render_mode="rgb_array"``, through
recorded actions: each frame must be an RGB array of bounded size (:func:`rgb_frame`), and the re-simulation is only
trusted while its observations equal the recorded ones (:func:`same_observation`). Both caption frames in Pillow's
default bitmap font, :data:`CAPTION_CHAR_WIDTH` pixels a character (:func:`action_caption`, :func:`fit_caption`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

__all__ = [
    "CAPTION_CHAR_WIDTH",
    "MAX_FRAME_PIXELS",
    "NotAFrame",
    "action_caption",
    "fit_caption",
    "plain_value",
    "rgb_frame",
    "same_observation",
]

MAX_FRAME_PIXELS: Final = 4096 * 4096
"""The largest frame accepted from a renderer, in pixels."""
CAPTION_CHAR_WIDTH: Final = 6
"""Pixels per character of Pillow's default bitmap font, which captions are drawn in."""


class NotAFrame(ValueError):
    """What ``render()`` returned is not an RGB frame; the message says what it was (``render() returned ...``)."""


def rgb_frame(frame: Any) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """``frame`` (what ``render()`` returned) as a contiguous HxWx3 uint8 array; grey frames are made RGB and an
    alpha channel is dropped. Raises :class:`NotAFrame` for anything else or for more than :data:`MAX_FRAME_PIXELS`."""
    if not isinstance(frame, np.ndarray):
        raise NotAFrame(f"render() returned {type(frame).__name__}, not an RGB array")
    if frame.ndim == 2:
        frame = np.stack([frame] * 3, axis=-1)
    if frame.ndim != 3 or frame.shape[2] not in (3, 4) or frame.dtype != np.uint8 or frame.size == 0:
        raise NotAFrame(f"render() returned an array of shape {frame.shape} and dtype {frame.dtype}, not HxWx3 uint8")
    if frame.shape[0] * frame.shape[1] > MAX_FRAME_PIXELS:
        raise NotAFrame(f"render() returned a {frame.shape[1]}x{frame.shape[0]} frame; the limit is 4096x4096")
    return np.ascontiguousarray(frame[:, :, :3])


def plain_value(value: Any) -> Any:
    """A JSON-like form of an observation or action (arrays and tuples as lists, numpy scalars as Python numbers,
    keys as str), for comparisons and captions.

    >>> plain_value({1: (np.int64(2), np.array([0.5]))})
    {'1': [2, [0.5]]}
    """
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    return value


def same_observation(produced: Any, recorded: Any) -> bool:
    """Whether a re-simulated observation equals a recorded one as recorded values (numeric arrays by value whatever
    their dtype, containers element-wise).

    >>> same_observation(np.array([1, 2], dtype=np.int8), [1.0, 2.0])
    True
    >>> same_observation({"a": (1, 2)}, {"a": [1, 3]})
    False
    """
    try:
        left, right = np.asarray(produced), np.asarray(recorded)
        if left.dtype.kind in "biuf" and right.dtype.kind in "biuf":
            return left.shape == right.shape and bool(np.array_equal(left.astype(np.float64), right.astype(np.float64)))
    except (TypeError, ValueError):
        pass
    return bool(plain_value(produced) == plain_value(recorded))


def action_caption(action: Any, width: int) -> str:
    """A short text form of an action, at most ``width`` characters (floats to 3 significant digits, vectors of
    numbers with 2 decimals, anything else as its text without spaces; cut with ``~``).

    >>> action_caption([0.5, 1, -0.25], 24)
    '[0.50,1,-0.25]'
    >>> action_caption({"move": 3}, 6)
    "{'mov~"
    """
    value = plain_value(action)
    if isinstance(value, float):
        text = f"{value:.3g}"
    elif isinstance(value, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        text = "[" + ",".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in value) + "]"
    else:
        text = str(value).replace(" ", "")
    return text if len(text) <= width else text[: max(width - 1, 1)] + "~"


def fit_caption(text: str, pixels: int) -> str:
    """``text`` cut (with ``~``) to what fits in ``pixels`` of :data:`CAPTION_CHAR_WIDTH`-pixel characters."""
    chars = max(pixels // CAPTION_CHAR_WIDTH, 1)
    return text if len(text) <= chars else text[: max(chars - 1, 1)] + "~"
