"""A deterministic, bounded-memory Parquet writer.

:class:`ParquetSink` takes Arrow batches of any size, keeps at most one row group's worth buffered,
and writes row groups of exactly ``row_group_rows`` rows (the last one may be shorter). With the
same rows in the same order it writes the same bytes: zstd at a fixed level, fixed row groups, no
timestamps, and the schema stored as given (``created_by`` names the pyarrow version, so byte
identity holds for one pyarrow version).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq
from evoledger.ledger.errors import ConfigError, SchemaError

__all__ = ["COMPRESSION", "COMPRESSION_LEVEL", "FileStats", "ParquetSink", "rows_per_group"]

COMPRESSION: Final = "zstd"
COMPRESSION_LEVEL: Final = 3
_TARGET_GROUP_BYTES: Final = 64 * 1024 * 1024
_MIN_GROUP_ROWS: Final = 1024
_MAX_GROUP_ROWS: Final = 131_072


def rows_per_group(bytes_per_row: int) -> int:
    """A row-group size holding about 64 MiB of rows of ``bytes_per_row`` (between 1024 and 131072 rows)."""
    estimate = _TARGET_GROUP_BYTES // max(1, bytes_per_row)
    return max(_MIN_GROUP_ROWS, min(_MAX_GROUP_ROWS, estimate))


@dataclass(frozen=True, slots=True)
class FileStats:
    """What one written file holds."""

    path: Path
    rows: int
    row_groups: int
    arrow_bytes: int
    """The Arrow size of the rows written (the ``num_bytes`` of a dataset card split)."""
    file_bytes: int


class ParquetSink:
    """Writes one Parquet file from a stream of batches (use as a context manager, or call :meth:`close`)."""

    def __init__(self, path: Path, schema: pa.Schema, *, row_group_rows: int) -> None:
        if row_group_rows < 1:
            raise ConfigError(f"row_group_rows must be at least 1, got {row_group_rows}")
        self.path: Final = path
        self.schema: Final = schema
        self._group_rows: Final = row_group_rows
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._rows = 0
        self._groups = 0
        self._arrow_bytes = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer: pq.ParquetWriter | None = pq.ParquetWriter(
            str(path),
            schema,
            compression=COMPRESSION,
            compression_level=COMPRESSION_LEVEL,
            use_dictionary=True,
            write_statistics=True,
            store_schema=True,
        )

    @property
    def rows(self) -> int:
        """Rows accepted so far (written or buffered)."""
        return self._rows + self._pending_rows

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Buffer ``batch``; write every full row group."""
        if batch.num_rows == 0:
            return
        if not batch.schema.equals(self.schema):
            raise SchemaError(
                f"a batch for {self.path.name} has schema\n{batch.schema}\nbut the file has\n{self.schema}"
            )
        batches = batch.to_batches() if isinstance(batch, pa.Table) else [batch]
        self._pending.extend(batches)
        self._pending_rows += batch.num_rows
        while self._pending_rows >= self._group_rows:
            table = pa.Table.from_batches(self._pending, schema=self.schema)
            self._write_group(table.slice(0, self._group_rows))
            rest = table.slice(self._group_rows)
            self._pending = rest.to_batches()
            self._pending_rows = rest.num_rows

    def _write_group(self, table: pa.Table) -> None:
        if self._writer is None:
            raise SchemaError(f"{self.path} is already closed")
        table = table.combine_chunks()
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._rows += table.num_rows
        self._groups += 1
        self._arrow_bytes += table.nbytes

    def close(self) -> FileStats:
        """Write what is buffered and close the file."""
        if self._writer is not None:
            if self._pending_rows:
                self._write_group(pa.Table.from_batches(self._pending, schema=self.schema))
                self._pending, self._pending_rows = [], 0
            self._writer.close()
            self._writer = None
        return FileStats(self.path, self._rows, self._groups, self._arrow_bytes, os.path.getsize(self.path))

    def abort(self) -> None:
        """Close without caring about the contents (used when an export fails)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
