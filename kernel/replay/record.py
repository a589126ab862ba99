"""A Run's record opened for auditing: read-only, without refusing damage, every row read once.

``Ledger.open`` refuses a log whose tail was truncated or whose head changed (rightly, for a
writer). An audit must instead read what is there and report it, so -- like ``ledger.verify`` --
this opens the SQLite database read-only and reads the log's rows, every column, as plain tuples
in one query (the fastest way to read them; the integrity, protocol and projection checks share
the one read). The Run's configuration is the ``RunConfig`` recorded in ``run-created``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.layout import RunLayout
from evoledger.ledger.database import DATABASE_NAME, SQLITE_ERRORS, Database, database_failure
from evoledger.ledger.errors import EvoLedgerError, IntegrityError, LedgerNotFoundError
from evoledger.ledger.head import MANIFEST_NAME
from evoledger.ledger.objects import OBJECTS_DIR_NAME, ObjectStore
from evoledger.ledger.verify import EVENT_COLUMNS, LogRow
from pydantic import ValidationError

__all__ = ["RunRecord", "open_record"]


@dataclass
class RunRecord:
    """One Run directory opened read-only: its layout, Object store and every log row."""

    layout: RunLayout
    db: Database
    objects: ObjectStore
    rows: list[LogRow]
    """Every ``events`` row by seq, all columns (:data:`~evoledger.ledger.verify.EVENT_COLUMNS`)."""
    created: dict[str, Any] | None
    """The ``run-created`` payload (``None`` when the log has none or it cannot be parsed)."""
    config: RunConfig | None
    config_error: str | None
    """Why ``config`` is ``None`` although ``created`` is not (a configuration this version cannot read)."""

    def close(self) -> None:
        self.db.close()

    def reopen(self) -> None:
        """Open the database again after :meth:`close` (``kernel.replay.side_process`` forks with none open)."""
        self.db = Database.open(self.db.path, writable=False)
        self.objects = ObjectStore(self.db, self.layout.root / OBJECTS_DIR_NAME)

    def __enter__(self) -> RunRecord:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _created(rows: list[LogRow]) -> dict[str, Any] | None:
    for row in rows:  # normally row 0
        kind, payload = row[1], row[4]
        if kind == "run-created":
            try:
                data = orjson.loads(payload)
            except orjson.JSONDecodeError:
                return None
            return data if isinstance(data, dict) else None
    return None


def _config(created: dict[str, Any] | None) -> tuple[RunConfig | None, str | None]:
    if created is None:
        return None, None
    try:
        return RunConfig.model_validate(created.get("config") or {}), None
    except (ValidationError, ValueError, EvoLedgerError) as exc:
        return None, f"the configuration recorded in run-created cannot be read by this evoledger: {exc}"


def open_record(run_dir: str | os.PathLike[str]) -> RunRecord:
    """Open ``run_dir`` for auditing.

    Raises :class:`LedgerNotFoundError` when the directory holds no ledger at all, and another
    :class:`LedgerError` when the database is missing or cannot be read (integrity reports why).
    """
    root = Path(run_dir)
    db_path = root / DATABASE_NAME
    if not db_path.is_file():
        if (root / MANIFEST_NAME).exists():
            raise IntegrityError(
                f"{db_path} is missing although {root / MANIFEST_NAME} exists: the ledger database was deleted; "
                "restore it from a backup"
            )
        raise LedgerNotFoundError(f"no Run in {root} ({db_path} does not exist); pass a Run directory")
    db = Database.open(db_path, writable=False)
    try:
        try:
            cursor = db.conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq")
            cursor.arraysize = 4096
            rows: list[LogRow] = cursor.fetchall()
        except SQLITE_ERRORS as exc:
            raise database_failure(exc, db_path, "reading the log for replay") from exc
        created = _created(rows)
        config, error = _config(created)
        return RunRecord(RunLayout(root), db, ObjectStore(db, root / OBJECTS_DIR_NAME), rows, created, config, error)
    except BaseException:
        db.close()
        raise
