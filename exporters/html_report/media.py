"""Media embedded in a report (rendered Episodes): title, media type and bytes, inlined as ``data:`` URIs."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from html import escape
from typing import Final, Protocol

from evoledger.ledger.errors import InputError

__all__ = ["MEDIA_TYPES", "EmbeddedMedia", "MediaLike", "media_html"]

MEDIA_TYPES: Final = frozenset(
    {"image/png", "image/gif", "image/jpeg", "image/webp", "video/mp4", "video/webm", "text/plain"}
)
"""The media types a report embeds: images (``<img>``), videos (``<video>``) and plain-text traces (``<pre>``)."""


class MediaLike(Protocol):
    """Anything with a title, a media type and bytes (e.g. a rendered Episode); :class:`EmbeddedMedia` is one."""

    @property
    def title(self) -> str: ...

    @property
    def media_type(self) -> str: ...

    @property
    def data(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class EmbeddedMedia:
    """One item of the report's "Rendered Episodes" section."""

    title: str
    media_type: str
    data: bytes


def media_html(item: MediaLike) -> str:
    """``item`` as a figure whose content is inline (a ``data:`` URI, or the text itself)."""
    if item.media_type not in MEDIA_TYPES:
        known = ", ".join(sorted(MEDIA_TYPES))
        raise InputError(f"cannot embed {item.title!r} of media type {item.media_type!r}; embed one of: {known}")
    caption = f"<figcaption>{escape(item.title)}</figcaption>"
    if item.media_type == "text/plain":
        body = f"<pre>{escape(item.data.decode('utf-8', errors='replace'))}</pre>"
    else:
        uri = f"data:{item.media_type};base64,{base64.b64encode(item.data).decode('ascii')}"
        alt = escape(item.title)
        if item.media_type.startswith("video/"):
            body = f'<video controls loop muted src="{uri}" title="{alt}"></video>'
        else:
            body = f'<img src="{uri}" alt="{alt}">'
    return f'<figure class="media">{body}{caption}</figure>'
