"""The ``evoledger`` command line: a thin click layer over the library."""

from evoledger.kernel.cli.main import cli, main

__all__ = ["cli", "main"]
