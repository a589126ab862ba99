"""Which Object digests an Event payload references, found fast from its canonical bytes.

The schema's convention (``ledger.events.references``): a digest is an Object reference when it is
the value (or in the list value) of a key named ``digest``/``digests`` or ``<name>_digest(s)``, or a
value of a ``files`` mapping. A compiled regex finds them in the payload bytes; when it cannot account
for every ``sha256:`` in the payload, the payload is parsed and walked exactly. ``verify()`` uses this
so that it never pays for pydantic parsing.
"""

from __future__ import annotations

import re
from typing import Final

from evoledger.ledger.canonical import is_digest, parse_payload
from evoledger.ledger.errors import EncodingError

__all__ = ["digests_in", "referenced_digests"]

_REFERENCE_KEY: Final = re.compile(r"^(?:.+_)?digests?$")
_FAST_REFS: Final = re.compile(rb'digest(?:":"(sha256:[0-9a-f]{64})"|s":\[((?:"sha256:[0-9a-f]{64}",?)*)\])')
_DIGEST_BYTES: Final = re.compile(rb"sha256:[0-9a-f]{64}")
_SINGLE_REFS: Final = re.compile(rb'_digest":"(sha256:[0-9a-f]{64})"')
"""The common payload: every digest is the value of a ``<name>_digest`` key (e.g. an Episode's trajectory)."""


def _single_refs(payload: bytes, total: int) -> list[str] | None:
    """The references when every ``sha256:`` is a ``<name>_digest`` value of a well-formed key, else ``None``.

    Without backslashes no key holds an escaped quote, so the last quote before a match opens its
    key; that quote must follow ``{`` or ``,`` and the key must not be ``_digest`` alone. Then the
    general scan below would accept exactly these matches, in this order.
    """
    if b"\\" in payload or b'"_digest"' in payload:
        return None
    found: list[str] = []
    for match in _SINGLE_REFS.finditer(payload):
        quote = payload.rfind(b'"', 0, match.start())
        if quote < 1 or payload[quote - 1] not in b"{,":
            return None
        found.append(match.group(1).decode("ascii"))
    return found if len(found) == total else None


def digests_in(data: bytes) -> list[str]:
    """Every digest-shaped ``sha256:<64 hex>`` in ``data``, in order, whatever key (if any) it is under."""
    return [digest.decode("ascii") for digest in _DIGEST_BYTES.findall(data)]


def referenced_digests(payload: bytes) -> list[str]:
    """The Object digests a canonical-JSON payload references (see the module docstring)."""
    total = payload.count(b"sha256:")
    if total == 0:
        return []
    common = _single_refs(payload, total)
    if common is not None:
        return common
    found: list[str] = []
    for match in _FAST_REFS.finditer(payload):
        start = match.start()
        quote = payload.rfind(b'"', 0, start)
        if quote != start - 1:  # the key is prefix + "digest(s)": the prefix must be "<something>_"
            prefix = payload[quote + 1 : start]
            if len(prefix) < 2 or not prefix.endswith(b"_") or b"\\" in prefix:
                continue  # not a reference key (or an escaped one): the count check below falls back
        if quote < 1 or payload[quote - 1] not in b"{,":
            continue
        single, many = match.groups()
        if single:
            found.append(single.decode("ascii"))
        else:
            found.extend(digests_in(many))
    if len(found) == total:
        return found
    try:
        value = parse_payload(payload)
        exact: list[str] = []
        _walk(value, exact)
    except (EncodingError, RecursionError):  # not JSON, or nested too deeply to walk: the scan's reading stands
        return found
    return exact


def _collect(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        if is_digest(value):
            out.append(value)
    elif isinstance(value, list):
        for item in value:
            _collect(item, out)


def _walk(value: object, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if _REFERENCE_KEY.match(key):
                _collect(item, out)
            elif key == "files" and isinstance(item, dict):
                for target in item.values():
                    _collect(target, out)
            _walk(item, out)
    elif isinstance(value, list):
        for item in value:
            _walk(item, out)
