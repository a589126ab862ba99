"""evoledger.benchmarks."""

__all__: list[str] = []
