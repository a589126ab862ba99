"""The public spec of a recorded Benchmark for ``evoledger export``, when the record itself holds none.

An ``evoledger evaluate --record-to`` record names its Benchmark (id, environment parameters and their
hash) but not its spaces, which typed dataset columns and Minari need. The export command asks the
Benchmark registry for them: by *registered name only* (nothing a record names is imported), built with
the default settings, then with the recorded parameters that are its ``--set`` settings, and accepted
only when the built Benchmark's parameter hash equals the recorded one, so the spaces are exactly those
the Episodes were played in. Otherwise there is no spec and the exporter stores JSON text. A registered Benchmark
whose family's optional extra is not installed is a :class:`~evoledger.ledger.errors.MissingExtraError` (the
install command), not a silent fallback to JSON text.
"""

from __future__ import annotations

from typing import Any, Final

from evoledger.kernel.registry import BenchmarkRegistry, default_registry, is_import_string
from evoledger.ledger.events import BenchmarkIdentity

__all__ = ["registered_spec"]

_NOT_SETTINGS: Final = frozenset({"gymnasium_id"})


def registered_spec(identity: BenchmarkIdentity, registry: BenchmarkRegistry | None = None) -> dict[str, Any] | None:
    """The spec of the registered Benchmark ``identity`` names, if its parameters hash matches; else ``None``."""
    chosen = registry or default_registry()
    if is_import_string(identity.id) or not chosen.knows(identity.id):  # a spec id is a registered name or alias
        return None
    chosen.check_installed(identity.id)  # MissingExtraError: the spaces need the family's extra
    params = {k: v for k, v in identity.params.items() if k not in _NOT_SETTINGS}
    try:
        model = chosen.config_model(identity.id)
    except Exception:  # a registered factory that cannot even be probed: no spec, never a crash
        return None
    settings = params if model is None else {k: v for k, v in params.items() if k in model.model_fields}
    for config in ({}, settings) if settings else ({},):
        try:
            spec = chosen.make(identity.id, config, allow_import=False).spec
        except Exception:  # a registered factory given recorded settings: no spec, never a crash
            continue
        if BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters)).params_hash == identity.params_hash:
            return spec.model_dump(mode="json", exclude={"parameters_digest"})
    return None
