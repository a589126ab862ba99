"""Upcasters: pure ``dict -> dict`` steps that lift a stored payload from one version of its kind to the next.

A registry maps ``(kind, from_version)`` to the step producing ``from_version + 1``; reading applies
steps in a chain until the current version. Steps receive a private deep copy, so a step that
mutates its argument still leaves the caller's data untouched. Payloads never contain ``kind`` or
``version`` (they live in the log row), and neither does an upcaster's output.

Tests build their own :class:`UpcasterRegistry`; :data:`UPCASTERS` is the library's own registry.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final, TypeAlias

from evoledger.ledger.errors import ConfigError, EvoLedgerError, SchemaError

__all__ = ["UPCASTERS", "Upcaster", "UpcasterRegistry"]

Upcaster: TypeAlias = Callable[[dict[str, Any]], dict[str, Any]]
"""A pure step from the payload of version ``n`` to the payload of version ``n + 1``."""


class UpcasterRegistry:
    """Upcasting steps keyed by ``(kind, from_version)``."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    def register(self, kind: str, from_version: int, upcaster: Upcaster) -> None:
        """Register the step that turns ``kind`` payloads of ``from_version`` into ``from_version + 1``."""
        if isinstance(from_version, bool) or not isinstance(from_version, int) or from_version < 1:
            raise ConfigError(f"from_version must be an integer >= 1, got {from_version!r}")
        key = (kind, from_version)
        if key in self._steps:
            raise ConfigError(
                f"an upcaster for {kind!r} v{from_version} -> v{from_version + 1} is already registered; "
                "each step is registered once"
            )
        self._steps[key] = upcaster

    def step(self, kind: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator form of :meth:`register`."""

        def decorate(upcaster: Upcaster) -> Upcaster:
            self.register(kind, from_version, upcaster)
            return upcaster

        return decorate

    def __contains__(self, key: object) -> bool:
        return key in self._steps

    def upcast(self, kind: str, data: dict[str, Any], *, from_version: int, to_version: int) -> dict[str, Any]:
        """Apply the chain of steps from ``from_version`` to ``to_version`` (a copy; ``data`` is untouched)."""
        if from_version > to_version:
            raise SchemaError(
                f"{kind!r} v{from_version} is newer than v{to_version}, the newest this evoledger knows; "
                "upgrade evoledger to read this record"
            )
        current = data
        for version in range(from_version, to_version):
            upcaster = self._steps.get((kind, version))
            if upcaster is None:
                raise SchemaError(
                    f"no upcaster for {kind!r} v{version} -> v{version + 1}; register one with "
                    "UpcasterRegistry.register() to read this older record"
                )
            try:
                current = upcaster(copy.deepcopy(current))
            except EvoLedgerError:
                raise
            except Exception as exc:
                raise SchemaError(f"upcaster for {kind!r} v{version} -> v{version + 1} failed: {exc!r}") from exc
            if not isinstance(current, dict):
                raise SchemaError(
                    f"upcaster for {kind!r} v{version} -> v{version + 1} returned "
                    f"{type(current).__name__}, not a dict; fix the upcaster"
                )
        return current


UPCASTERS: Final = UpcasterRegistry()
"""The library's upcasters."""


@UPCASTERS.step("infra-fault", 1)
def _infra_fault_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 added ``suspicious``: a v1 fault was never past a refund limit (v1 Hosts had none)."""
    data["suspicious"] = False
    return data
