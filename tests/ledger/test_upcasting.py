"""Upcasters: older stored versions are lifted, step by step, to the current schema before validation."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pytest
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import ConfigError, SchemaError
from evoledger.ledger.events import (
    EVENT_TYPES,
    UPCASTERS,
    EventBase,
    EventCodec,
    FinishRejected,
    UpcasterRegistry,
    event_types,
)
from evoledger.ledger.records import GENESIS_HASH, StoredEvent, Visibility


class DemoMeasured(EventBase):
    """Test-only kind at version 3: v1 had ``value``; v2 renamed it ``amount``; v3 added ``unit``."""

    kind: Literal["demo-measured"] = "demo-measured"
    version: Literal[3] = 3
    visibility: ClassVar[Visibility] = "public"

    amount: int
    unit: str


def _rename_value(data: dict[str, Any]) -> dict[str, Any]:
    data["amount"] = data.pop("value")  # mutates its (private) argument on purpose
    return data


def _add_unit(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "unit": "steps"}


def _registry() -> UpcasterRegistry:
    registry = UpcasterRegistry()
    registry.register("demo-measured", 1, _rename_value)
    registry.register("demo-measured", 2, _add_unit)
    return registry


def _codec(registry: UpcasterRegistry) -> EventCodec:
    return EventCodec(types=event_types([DemoMeasured, FinishRejected]), upcasters=registry)


def _row(payload: dict[str, Any] | bytes, version: int, kind: str = "demo-measured") -> StoredEvent:
    data = payload if isinstance(payload, bytes) else canonical_json(payload)
    return StoredEvent(
        seq=3,
        kind=kind,
        version=version,
        visibility="public",
        payload=data,
        prev_hash=GENESIS_HASH,
        hash=GENESIS_HASH,
        recorded_at="",
    )


def test_chain_lifts_version_1_through_2_to_3() -> None:
    event = _codec(_registry()).from_stored(_row({"value": 7}, version=1))
    assert event == DemoMeasured(amount=7, unit="steps")


def test_version_2_only_runs_the_last_step() -> None:
    event = _codec(_registry()).from_stored(_row({"amount": 7}, version=2))
    assert event == DemoMeasured(amount=7, unit="steps")


def test_current_version_is_not_upcast() -> None:
    codec = _codec(_registry())
    current = codec.to_pending(DemoMeasured(amount=1, unit="s"))
    assert current.version == 3
    assert codec.from_stored(_row(current.payload, version=3)) == DemoMeasured(amount=1, unit="s")
    with pytest.raises(SchemaError, match="value"):  # a v1 payload stored as v3 fails validation
        codec.from_stored(_row({"value": 7}, version=3))


def test_upcast_leaves_the_input_untouched() -> None:
    data = {"value": 7}
    result = _registry().upcast("demo-measured", data, from_version=1, to_version=3)
    assert result == {"amount": 7, "unit": "steps"}
    assert data == {"value": 7}


def test_missing_step_names_kind_and_version() -> None:
    registry = UpcasterRegistry()
    registry.register("demo-measured", 2, _add_unit)
    with pytest.raises(SchemaError, match=r"event #3 .*no upcaster for 'demo-measured' v1 -> v2"):
        _codec(registry).from_stored(_row({"value": 7}, version=1))


def test_failing_step_becomes_schema_error() -> None:
    with pytest.raises(SchemaError, match=r"v1 -> v2 failed: KeyError\('value'\)"):
        _codec(_registry()).from_stored(_row({"amount": 7}, version=1))


def test_step_must_return_a_dict() -> None:
    registry = UpcasterRegistry()
    registry.register("demo-measured", 2, lambda data: [data])  # type: ignore[arg-type, return-value]
    with pytest.raises(SchemaError, match="returned list, not a dict"):
        _codec(registry).from_stored(_row({"amount": 7}, version=2))


def test_step_output_may_not_carry_kind_or_version() -> None:
    registry = UpcasterRegistry()
    registry.register("demo-measured", 2, lambda data: {**data, "unit": "s", "version": 3})
    with pytest.raises(SchemaError, match="repeats"):
        _codec(registry).from_stored(_row({"amount": 7}, version=2))


def test_old_payload_must_be_a_json_object() -> None:
    with pytest.raises(SchemaError, match="not an object"):
        _codec(_registry()).from_stored(_row(b"[1]", version=1))
    with pytest.raises(SchemaError, match="not valid canonical JSON"):
        _codec(_registry()).from_stored(_row(b"{nope", version=1))


def test_newer_version_than_known_is_refused() -> None:
    with pytest.raises(SchemaError, match="upgrade evoledger"):
        _codec(_registry()).from_stored(_row({"amount": 1, "unit": "s"}, version=4))
    with pytest.raises(SchemaError, match="newer"):
        _registry().upcast("demo-measured", {}, from_version=4, to_version=3)


def test_registration_errors() -> None:
    registry = _registry()
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("demo-measured", 1, _rename_value)
    with pytest.raises(ConfigError, match=">= 1"):
        registry.register("demo-measured", 0, _rename_value)


def test_decorator_form_registers() -> None:
    registry = UpcasterRegistry()

    @registry.step("demo-measured", 1)
    def _v1(data: dict[str, Any]) -> dict[str, Any]:
        return {"amount": data["value"]}

    assert ("demo-measured", 1) in registry
    assert ("demo-measured", 2) not in registry
    assert _v1({"value": 2}) == {"amount": 2}


def test_global_registry_is_untouched_by_tests() -> None:
    assert ("demo-measured", 1) not in UPCASTERS
    assert "demo-measured" not in EVENT_TYPES


def test_a_v1_infra_fault_reads_as_not_suspicious() -> None:
    from evoledger.ledger.events import InfraFault, from_stored

    payload = {"split": "train", "submission_id": "submission-000001", "indices": [2], "refunded_units": 1}
    event = from_stored(_row({**payload, "reason": "worker died"}, version=1, kind="infra-fault"))
    assert isinstance(event, InfraFault)
    assert event.version == 2
    assert event.suspicious is False
    assert event.refunded_units == 1
