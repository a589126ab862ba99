"""The Parquet sink: exact row groups, bounded buffering, byte-identical output."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from evoledger.exporters.parquet import ParquetSink, rows_per_group
from evoledger.ledger.errors import ConfigError, SchemaError

SCHEMA = pa.schema([pa.field("x", pa.int64(), nullable=False), pa.field("s", pa.string())])


def _batch(start: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"x": list(range(start, start + n)), "s": [f"v{(start + i) % 3}" for i in range(n)]}, schema=SCHEMA
    )


def _write(path: Path, sizes: list[int], group: int) -> None:
    with ParquetSink(path, SCHEMA, row_group_rows=group) as sink:
        start = 0
        for n in sizes:
            sink.write(_batch(start, n))
            start += n


def test_row_groups_have_exactly_the_configured_size(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", [3, 10, 1, 0, 7, 2], group=4)
    metadata = pq.read_metadata(tmp_path / "a.parquet")
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [4, 4, 4, 4, 4, 3]
    assert pq.read_table(tmp_path / "a.parquet").column("x").to_pylist() == list(range(23))
    assert metadata.row_group(0).column(0).compression == "ZSTD"


def test_batch_boundaries_do_not_change_the_bytes(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", [5, 5, 5, 5], group=8)
    _write(tmp_path / "b.parquet", [1, 19], group=8)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_wrong_schema_and_bad_sizes_are_refused(tmp_path: Path) -> None:
    with ParquetSink(tmp_path / "c.parquet", SCHEMA, row_group_rows=4) as sink:
        other = pa.RecordBatch.from_pydict({"y": [1]})
        with pytest.raises(SchemaError, match="has schema"):
            sink.write(other)
    with pytest.raises(ConfigError, match="row_group_rows must be at least 1"):
        ParquetSink(tmp_path / "d.parquet", SCHEMA, row_group_rows=0)


def test_rows_per_group_is_bounded() -> None:
    assert rows_per_group(1) == 131_072
    assert rows_per_group(10**9) == 1024
    assert rows_per_group(1024) == 65_536
