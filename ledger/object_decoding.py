"""Decoding one stored Object: a zstd frame checked against its recorded size and digest, never past that size.

:func:`decode_stream` decompresses as a stream and hashes while it goes, holding one chunk (plus what the
``sink`` keeps); it raises :class:`ObjectOversizeError` as soon as the frame yields more than the recorded
size, and :class:`IntegrityError` when the frame declares another size, cannot be decoded or hashes to
another digest. :func:`decode_small` does the same in one allocation for small inline Objects.
:func:`compressed_bound` is the most bytes a frame of a given size may take (a longer file or row is
refused before it is read); :data:`BOUND_SQL` is that bound in SQL, so SQLite never hands over more.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from typing import BinaryIO, Final

import zstandard
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import IntegrityError, ObjectOversizeError

__all__ = ["BOUND_SQL", "compressed_bound", "decode_small", "decode_stream"]

_CHUNK: Final = 1 << 20
BOUND_SQL: Final = "typeof(size) = 'integer' AND length(data) <= size + (size >> 7) + 65536"
"""SQL true when a row's inline bytes are within :func:`compressed_bound` of its recorded size."""


def decode_small(
    decompressor: zstandard.ZstdDecompressor,
    digest: str,
    size: int,
    data: bytes,
    sink: Callable[[bytes], object] | None,
) -> int:
    """Decode a small frame in one allocation of ``size`` (its declared size is checked first); ``size``."""
    try:
        declared = zstandard.frame_content_size(data)
    except zstandard.ZstdError as exc:
        raise IntegrityError(f"Object {digest} is damaged: its zstd frame is unreadable ({exc})") from None
    if declared != size:
        return decode_stream(decompressor, digest, size, io.BytesIO(data), sink)  # reports it
    try:
        raw = decompressor.decompress(data)  # allocates the declared size: checked above
    except zstandard.ZstdError as exc:
        raise IntegrityError(f"Object {digest} is damaged: zstd cannot decompress it ({exc})") from None
    if len(raw) != size or digest_of(raw) != digest:
        raise IntegrityError(
            f"Object {digest} is damaged: its bytes hash to {digest_of(raw)}; restore the run from a backup"
        )
    if sink is not None:
        sink(raw)
    return size


def decode_stream(
    decompressor: zstandard.ZstdDecompressor,
    digest: str,
    size: int,
    source: BinaryIO,
    sink: Callable[[bytes], object] | None,
) -> int:
    """Decompress ``source`` as a stream into ``sink``, hashing as it goes; never more than ``size`` bytes."""
    header = source.read(18)  # a zstd frame header is at most 18 bytes
    source.seek(0)
    try:
        declared = zstandard.get_frame_parameters(header).content_size
    except zstandard.ZstdError as exc:
        raise IntegrityError(f"Object {digest} is damaged: its zstd frame is unreadable ({exc})") from None
    if declared != size:
        shown = "no size" if declared == zstandard.CONTENTSIZE_UNKNOWN else f"{declared} bytes"
        raise IntegrityError(
            f"Object {digest} is damaged: its zstd frame declares {shown} but the store recorded {size}"
        )
    hasher = hashlib.sha256()
    total = 0
    try:
        with decompressor.stream_reader(source, closefd=False) as reader:
            while chunk := reader.read(_CHUNK):
                total += len(chunk)
                if total > size:
                    raise ObjectOversizeError(
                        f"Object {digest} is damaged: its zstd frame yields more than the {size} bytes it declares"
                    )
                hasher.update(chunk)
                if sink is not None:
                    sink(chunk)
    except zstandard.ZstdError as exc:
        raise IntegrityError(f"Object {digest} is damaged: zstd cannot decompress it ({exc})") from None
    found = "sha256:" + hasher.hexdigest()
    if total != size or found != digest:
        raise IntegrityError(
            f"Object {digest} is damaged: its {total} bytes hash to {found}; restore the run from a backup"
        )
    return total


def compressed_bound(size: int) -> int:
    """The most bytes a zstd frame of ``size`` raw bytes takes (``ZSTD_compressBound`` with a margin)."""
    return size + (size >> 7) + (1 << 16)
