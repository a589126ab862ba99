"""Datasets and reports built from the ledger and projections (the exporters land with issue 6)."""

__all__: list[str] = []
