"""The one SQLite file of a Ledger: connection, PRAGMAs, schema and transactions.

``ledger.sqlite`` holds both the Event log (table ``events``) and the Object store (table
``objects``), so Objects and the Events that reference them can commit in one transaction.
The connection runs in autocommit mode; :meth:`Database.transaction` opens ``BEGIN IMMEDIATE``
at the outermost level and a ``SAVEPOINT`` when nested, so an inner failure (a rejected append)
undoes only its own writes. Work that must wait for the outermost commit (writing the head
manifest, deleting an evicted Object's file) is registered with :meth:`Database.after_commit`.

The file is in WAL mode with ``synchronous=NORMAL``: commits are ordered, so a commit that
survives a crash implies every earlier commit survived too (Objects committed before an Event
are never lost while the Event persists). After an OS crash or power loss the last few commits
may be lost; the head manifest then reports a truncated tail, which is the truth.

**A database from someone else.** ``ledger.sqlite`` (and its ``-wal``, ``-shm`` and ``-journal``
companions) must be regular files, not links, fifos or devices: SQLite opens them by path, so they
are checked with ``lstat`` first (:mod:`evoledger.ledger.run_files`). Every connection runs with
``PRAGMA trusted_schema=OFF``; a read-only one is opened with ``mode=ro``. (``immutable=1`` is not
used: it would ignore a WAL file holding the last commits of a Run that was not checkpointed.)
The schema is compared with :data:`SCHEMA` exactly: any other table, index, view or trigger is
listed in :attr:`Database.schema_problems` (``verify`` reports each), and a writable open -- which
would fire a planted trigger on the next append -- refuses the database.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import (
    EvoLedgerError,
    InputError,
    IntegrityError,
    LedgerError,
    SchemaError,
    StorageFullError,
)
from evoledger.ledger.run_files import check_entry, open_root

__all__ = ["DATABASE_NAME", "LEDGER_FORMAT", "SCHEMA", "SQLITE_ERRORS", "Database", "database_failure"]

DATABASE_NAME: Final = "ledger.sqlite"
LEDGER_FORMAT: Final = "evoledger.ledger/1"
_BUSY_TIMEOUT_MS: Final = 10_000
_COMPANIONS: Final = ("-wal", "-shm", "-journal")
_MAX_SCHEMA_ROWS: Final = 1000

SCHEMA: Final[tuple[tuple[str, str, str, str | None], ...]] = (
    ("table", "meta", "meta", 'CREATE TABLE "meta" (\n   "key" TEXT PRIMARY KEY,\n   "value" TEXT NOT NULL\n) STRICT'),
    ("index", "sqlite_autoindex_meta_1", "meta", None),
    (
        "table",
        "events",
        "events",
        'CREATE TABLE "events" (\n   "seq" INTEGER PRIMARY KEY,\n   "kind" TEXT NOT NULL,\n'
        '   "version" INTEGER NOT NULL,\n   "visibility" TEXT NOT NULL,\n   "payload" BLOB NOT NULL,\n'
        '   "prev_hash" TEXT NOT NULL,\n   "hash" TEXT NOT NULL,\n   "recorded_at" TEXT NOT NULL\n) STRICT',
    ),
    (
        "table",
        "objects",
        "objects",
        'CREATE TABLE "objects" (\n   "digest" TEXT PRIMARY KEY,\n   "size" INTEGER NOT NULL,\n'
        '   "location" TEXT NOT NULL,\n   "data" BLOB\n) STRICT',
    ),
    ("index", "sqlite_autoindex_objects_1", "objects", None),
)
"""Every row of ``sqlite_master`` a ledger has: ``(type, name, tbl_name, sql)``, exactly as created."""
_CORE_TABLES: Final = frozenset(name for kind, name, _, _ in SCHEMA if kind == "table")

SQLITE_ERRORS: Final = (sqlite3.Error, UnicodeDecodeError)
"""What SQLite may raise: a damaged file can even produce an error message that is not UTF-8."""


def database_failure(exc: Exception, path: Path, doing: str) -> EvoLedgerError:
    """Translate an ``sqlite3`` error into one of ours that names the file and a fix."""
    text = str(exc)
    if isinstance(exc, sqlite3.ProgrammingError) and "closed" in text:
        return InputError(f"cannot keep {doing}: the ledger at {path.parent} is closed; open it again")
    if isinstance(exc, sqlite3.OperationalError) and "disk is full" in text:
        return StorageFullError(
            f"no space left for {path} while {doing} ({text}): nothing of this write was recorded and the ledger "
            f"is intact: free disk space, then continue with `evoledger resume {path.parent}`."
        )
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return LedgerError(
            f"{path} is busy: SQLite failed while {doing}: {text}. Another connection holds a write "
            "transaction; retry when it has finished."
        )
    return IntegrityError(
        f"{path} is damaged or not an evoledger ledger: SQLite failed while {doing}: {text}. "
        f"Run `evoledger ledger verify {path.parent}` for a full report; restore the run from a backup."
    )


class Database:
    """An open ``ledger.sqlite`` shared by the Event log and the Object store of one Ledger."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, *, writable: bool, schema_problems: tuple[str, ...] = ()
    ) -> None:
        self.conn: Final = conn
        self.path: Final = path
        self.writable: Final = writable
        self.schema_problems: Final = schema_problems
        """What ``sqlite_master`` holds beyond (or instead of) :data:`SCHEMA`: planted tables, views, triggers."""
        self.lock: Final = threading.RLock()
        """Held for every statement and for the whole of a transaction (one thread at a time)."""
        self._commit_hooks: list[dict[str, Callable[[], None]]] = []
        self._rollback_hooks: list[list[Callable[[], None]]] = []
        self._closed = False

    # -- opening ------------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path) -> Database:
        """Create a new ledger database at ``path`` (which must not exist) and return it writable."""
        _check_files(path)
        try:
            conn = sqlite3.connect(_real_path(path), isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            _configure(conn)
            conn.execute("BEGIN IMMEDIATE")
            for kind, _name, _table, sql in SCHEMA:
                if kind == "table" and sql is not None:
                    conn.execute(sql)
            conn.execute("INSERT INTO meta(key, value) VALUES ('format', ?)", (LEDGER_FORMAT,))
            conn.execute("COMMIT")
        except SQLITE_ERRORS as exc:
            raise database_failure(exc, path, "creating the ledger database") from exc
        return cls(conn, path, writable=True)

    @classmethod
    def open(cls, path: Path, *, writable: bool) -> Database:
        """Open an existing ledger database; read-only unless ``writable``.

        Raises :class:`UnsafePathError` when the file or a companion is a link or not a regular file, and
        :class:`SchemaError` when the three tables are not exactly the ledger's, or (``writable``) when
        anything else was added to the schema.
        """
        _check_files(path)
        conn: sqlite3.Connection | None = None
        try:
            real = _real_path(path)
            if writable:
                conn = sqlite3.connect(real, isolation_level=None, check_same_thread=False)
            else:
                conn = sqlite3.connect(
                    f"{Path(real).as_uri()}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
                )
            _configure(conn)
            differences = _schema_problems(conn)
            problems = [problem for _, problem in differences]
            core = any(name in _CORE_TABLES for name, _ in differences)
            row = None if core else conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except SQLITE_ERRORS as exc:
            if conn is not None:
                conn.close()
            raise database_failure(exc, path, "opening the ledger database") from exc
        if core or (writable and problems):
            conn.close()
            raise SchemaError(
                f"{path} does not have the ledger's schema: {'; '.join(problems[:5])}"
                f"{f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''}. Its tables, views or triggers "
                "were changed outside evoledger (a planted trigger would run on the next write), so it is not "
                f"opened for {'writing' if writable else 'reading'}; run `evoledger ledger verify {path.parent}` "
                "to list every difference, and restore the Run from a trusted copy"
            )
        if row is None or row[0] != LEDGER_FORMAT:
            conn.close()
            found = "no format record" if row is None else f"format {row[0]!r}"
            raise SchemaError(
                f"{path} has {found}; this evoledger reads {LEDGER_FORMAT!r}. "
                "Open it with the evoledger version that wrote it."
            )
        return cls(conn, path, writable=writable, schema_problems=tuple(problems))

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            if not self._closed:
                self._closed = True
                self.conn.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- transactions -------------------------------------------------------------------------------
    def require_writable(self, action: str) -> None:
        """Raise :class:`InputError` if this database was opened read-only."""
        if not self.writable:
            raise InputError(
                f"cannot {action}: the ledger at {self.path.parent} was opened read-only; open it with writable=True"
            )
        if self._closed:
            raise InputError(f"cannot {action}: the ledger at {self.path.parent} is closed")

    @property
    def in_transaction(self) -> bool:
        return bool(self._commit_hooks)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit: ``BEGIN IMMEDIATE`` outermost, a ``SAVEPOINT`` when nested."""
        with self.lock:
            self.require_writable("write")
            depth = len(self._commit_hooks)
            name = f"evoledger_sp{depth}"
            try:
                self.conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT {name}")
            except SQLITE_ERRORS as exc:
                raise database_failure(exc, self.path, "starting a transaction") from exc
            self._commit_hooks.append({})
            self._rollback_hooks.append([])
            try:
                yield
            except BaseException:
                self._commit_hooks.pop()
                undo = self._rollback_hooks.pop()
                try:
                    if depth == 0:
                        self.conn.execute("ROLLBACK")
                    else:
                        self.conn.execute(f"ROLLBACK TO {name}")
                        self.conn.execute(f"RELEASE {name}")
                finally:
                    for hook in undo:
                        hook()
                raise
            hooks = self._commit_hooks.pop()
            undo = self._rollback_hooks.pop()
            if depth > 0:
                self._commit_hooks[-1].update(hooks)
                self._rollback_hooks[-1].extend(undo)
                try:
                    self.conn.execute(f"RELEASE {name}")
                except SQLITE_ERRORS as exc:
                    raise database_failure(exc, self.path, "releasing a savepoint") from exc
                return
            try:
                self.conn.execute("COMMIT")
            except SQLITE_ERRORS as exc:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                for hook in undo:
                    hook()
                raise database_failure(exc, self.path, "committing a transaction") from exc
            for hook in hooks.values():
                hook()

    def after_commit(self, key: str, hook: Callable[[], None]) -> None:
        """Run ``hook`` once the outermost transaction commits (now, if none is open).

        Hooks are keyed: registering the same key again in one transaction replaces the earlier
        hook, so e.g. the head manifest is written once per commit. A hook registered inside a
        savepoint that rolls back is dropped.
        """
        if self._commit_hooks:
            self._commit_hooks[-1][key] = hook
        else:
            hook()

    def on_rollback(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` if the innermost open transaction (or savepoint) rolls back."""
        if self._rollback_hooks:
            self._rollback_hooks[-1].append(hook)


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA trusted_schema=OFF")  # no function with side effects from a view, trigger or index
    conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous=NORMAL")


def _check_files(path: Path) -> None:
    """Refuse a database file or companion (``-wal``, ``-shm``, ``-journal``) that is a link or not a regular file.

    SQLite opens these by path (and creates the companions), so each is checked with ``lstat`` relative to a
    descriptor of the run directory before SQLite sees it.
    """
    try:
        folder = open_root(path.parent)
    except FileNotFoundError:
        return  # SQLite reports the missing folder
    try:
        check_entry(folder, path.name, "file", path)
        for suffix in _COMPANIONS:
            check_entry(folder, path.name + suffix, "file", path.with_name(path.name + suffix))
    finally:
        os.close(folder)


def _real_path(path: Path) -> str:
    """``path`` with its folder resolved (the run directory may be reached through a link; its entries may not)."""
    return os.path.join(os.path.realpath(path.parent), path.name)


def _schema_problems(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """How ``sqlite_master`` differs from :data:`SCHEMA`: ``(object name, what)`` for each (empty when exact)."""
    rows = conn.execute(f"SELECT type, name, tbl_name, sql FROM sqlite_master LIMIT {_MAX_SCHEMA_ROWS + 1}").fetchall()
    expected = {name: (kind, name, table, sql) for kind, name, table, sql in SCHEMA}
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    for row in rows[:_MAX_SCHEMA_ROWS]:
        kind, name = row[0], str(row[1])
        seen.add(name)
        want = expected.get(name)
        if want is None:
            problems.append((name, f"unexpected {kind!s:.10} {name!r:.80}"))
        elif tuple(row) != want:
            problems.append((name, f"changed {kind!s:.10} {name!r:.80}"))
    if len(rows) > _MAX_SCHEMA_ROWS:
        problems.append(("", f"more than {_MAX_SCHEMA_ROWS} schema entries"))
    problems += [(name, f"missing {kind} {name!r}") for kind, name, _, _ in SCHEMA if name not in seen]
    return problems
