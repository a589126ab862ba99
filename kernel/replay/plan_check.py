"""Part of replay's protocol check: the Run's secret key is host-only, and every planned seed re-derives from it.

A Run records its secret key in one host-only ``run-key`` Event; every Host seed is an HMAC of that key
(``kernel.planning.secret_seeds``). This check finds, in order:

- ``run_key_missing`` / ``run_key_duplicate`` / ``run_key_unreadable``: no key, two keys, or a key that is
  not 64 hex digits -- the plan cannot be re-derived;
- ``run_key_public``: the key Event stored with ``public`` visibility (it reached the Agent's mirror, so
  every held-out Episode is predictable); ``run_key_leaked``: the key's hex or decimal form in a public Event;
- ``run_key_mismatch``: ``run-created`` records a user-given seed, but the key is not the one it derives;
- ``planned_seed_mismatch``: an ``episode-planned`` Policy seed, Environment seed or scenario that the key
  does not give. Policy seeds need only the key. Environment seeds and scenarios come from the
  Benchmark's ``episodes()``, so they are re-derived when the recorded Benchmark is a registered name
  (a Benchmark named by an import string is not imported from a record unless the user trusts it,
  ``--trust-recorded-benchmark``: a note says so).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, cast

import orjson
from evoledger.kernel.authoring import Split
from evoledger.kernel.authoring.keyed_seeds import keyed_seed, run_key_from_seed
from evoledger.kernel.registry import is_import_string, resolve_recorded
from evoledger.kernel.replay.record import RunRecord
from evoledger.kernel.replay.report import Finding
from evoledger.ledger.canonical import canonical_json
from evoledger.projections.audit import PlannedSeed

__all__ = ["plan_findings"]

_KEY_HEX: Final = re.compile(r"[0-9a-f]{64}")
_MAX_MISMATCHES: Final = 20


def plan_findings(record: RunRecord, planned: Sequence[PlannedSeed], *, trust_benchmark: bool = False) -> list[Finding]:
    """Findings about the Run's key and its planned seeds (none for a record that is not a Run).

    ``trust_benchmark``: a Benchmark the record names by import string may be imported to re-derive the plan.
    """
    if record.created is None:
        return []
    key, findings = _recorded_key(record)
    if key is None:
        return findings
    findings.extend(_leaks(record, key))
    seed = record.created.get("seed")
    if type(seed) is int and seed >= 0 and run_key_from_seed(seed) != key:
        findings.append(
            Finding(
                "run_key_mismatch",
                f"run-created records the seed {seed} but the run-key Event holds another key: the key was "
                "replaced after the Run was created, or the record was assembled from two Runs",
                seq=0,
            )
        )
    findings.extend(_policy_seed_findings(key, planned))
    findings.extend(_environment_findings(record, key, planned, trust_benchmark))
    return findings


def _recorded_key(record: RunRecord) -> tuple[bytes | None, list[Finding]]:
    rows = [row for row in record.rows if row[1] == "run-key"]
    if not rows:
        return None, [
            Finding(
                "run_key_missing",
                "the log has no run-key Event, so no planned seed can be re-derived or checked: it was removed, "
                "or the Run was recorded by an evoledger that derived every Host seed from a public seed",
            )
        ]
    findings = [
        Finding("run_key_duplicate", f"a second run-key Event (event {row[0]}): a Run has one secret key", seq=row[0])
        for row in rows[1:]
    ]
    seq, visibility, payload = rows[0][0], rows[0][3], rows[0][4]
    if visibility != "host":
        findings.append(
            Finding(
                "run_key_public",
                f"the run-key Event {seq} is stored {visibility!r}, not 'host': the Run's secret key was visible "
                "to the Agent, so every Validation and Assessment Episode was predictable",
                seq=seq,
            )
        )
    try:
        data: Any = orjson.loads(payload)
    except orjson.JSONDecodeError:
        data = None
    hex_key = data.get("key") if isinstance(data, dict) else None
    if not isinstance(hex_key, str) or _KEY_HEX.fullmatch(hex_key) is None:
        findings.append(Finding("run_key_unreadable", f"the run-key Event {seq} holds no 64-hex-digit key", seq=seq))
        return None, findings
    return bytes.fromhex(hex_key), findings


def _leaks(record: RunRecord, key: bytes) -> list[Finding]:
    forms = (key.hex().encode(), str(int.from_bytes(key, "big")).encode())
    public = [row for row in record.rows if row[3] != "host" and row[1] != "run-key"]
    joined = b"\n".join(row[4] for row in public)  # one scan at C speed; rows only when it hits
    if not any(form in joined for form in forms):  # canonical JSON holds the key as evoledger writes it: lowercase
        return []
    return [
        Finding(
            "run_key_leaked",
            f"public event {row[0]} ({row[1]}) contains the Run's secret key: the Agent could compute "
            "every held-out Episode",
            seq=row[0],
        )
        for row in public
        if any(form in row[4] for form in forms)
    ]


def _mismatch(p: PlannedSeed, what: str) -> Finding:
    return Finding(
        "planned_seed_mismatch",
        f"the {what} planned for {p.split} Episode {p.index} is not the one the Run's key gives: "
        "the plan was changed after the key was drawn",
    )


def _policy_seed_findings(key: bytes, planned: Sequence[PlannedSeed]) -> list[Finding]:
    found = []
    for p in planned:
        if p.split in ("train", "validation", "assessment") and p.policy_seed != keyed_seed(
            key, "policy", p.split, p.index
        ):
            found.append(_mismatch(p, "Policy seed"))
            if len(found) >= _MAX_MISMATCHES:
                break
    return found


def _environment_findings(
    record: RunRecord, key: bytes, planned: Sequence[PlannedSeed], trusted: bool
) -> list[Finding]:
    config = record.config
    if config is None or not planned:
        return []
    if is_import_string(config.benchmark.name) and not trusted:
        return [
            Finding(
                "plan_not_rederived",
                f"Environment seeds and scenarios were not re-derived: the Benchmark {config.benchmark.name!r} is "
                "named by an import string, which replay does not import from a record without "
                "--trust-recorded-benchmark (Policy seeds were checked)",
                severity="note",
            )
        ]
    try:
        benchmark = resolve_recorded(config.benchmark, trusted=trusted)
        by_split: dict[str, list[PlannedSeed]] = {}
        for p in planned:
            by_split.setdefault(p.split, []).append(p)
        found = []
        for split, recorded in by_split.items():
            if split not in ("train", "validation", "assessment"):
                continue
            specs = benchmark.episodes(
                cast(Split, split), seed=keyed_seed(key, "environment", split), count=len(recorded)
            )
            expected = {s.index: s for s in specs}
            for p in recorded:
                spec = expected.get(p.index)
                if spec is None or spec.seed != p.env_seed:
                    found.append(_mismatch(p, "Environment seed"))
                elif canonical_json(dict(spec.scenario or {})) != canonical_json(p.scenario or {}):
                    found.append(_mismatch(p, "scenario"))
                if len(found) >= _MAX_MISMATCHES:
                    return found
        return found
    except Exception as exc:  # a Benchmark that cannot be built or plan here is reported, never raised
        return [
            Finding(
                "plan_not_rederived",
                f"Environment seeds and scenarios were not re-derived: the Benchmark {config.benchmark.name!r} "
                f"cannot plan here ({type(exc).__name__}: {str(exc)[:300]}); Policy seeds were checked",
                severity="warning",
            )
        ]
