"""What a sick or foreign database means for the operator, without the database layer: the
store's errors, the schema revisions this version knows, and SQLite's own verdict on a
damaged file. engine.py (SQLAlchemy) and reads.py (the standard library's sqlite3, for the
commands that only read: docs/DESIGN.md §7) both judge by these, so the two paths say the
same line for the same database.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Collection
from functools import cache
from pathlib import Path
from urllib.parse import quote

MIGRATIONS = Path(__file__).with_name("migrations")
INTEGRITY_CHECK_SECONDS = 10.0  # a damaged file is diagnosed, not scanned for minutes


class StoreError(Exception):
    """The database cannot be used right now; the message says why."""


class StoreFatal(StoreError):
    """Nothing can work until an operator acts on the file: the daemon stops (exit 1)."""


class StoreCorrupt(StoreFatal):
    """The file is not a database, or a page of it is damaged."""


class StoreGone(StoreFatal):
    """The database file was deleted or replaced under the running process."""


class StoreFull(StoreError):
    """The disk, or the database's own size limit, is full: reads still work, writes fail
    (SQLite's SQLITE_FULL; PostgreSQL's SQLSTATE 53100, disk_full)."""


class StoreMissing(StoreError):
    """No database yet; read-only commands never create one."""


_REVISION = re.compile(r'^(down_revision|revision) = (?:None|"([^"]+)")$', re.MULTILINE)


@cache
def revisions() -> tuple[frozenset[str], str]:
    """This version's schema revisions and the newest, read from the migration scripts'
    `revision = "…"` / `down_revision = "…"` lines as alembic's ScriptDirectory reads
    them, without importing alembic (tests/unit/test_schema_revisions.py holds the two
    equal)."""
    known: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("[0-9]*.py"):
        for name, value in _REVISION.findall(script.read_text(encoding="utf-8")):
            if value:
                (known if name == "revision" else parents).add(value)
    heads = known - parents
    if len(heads) != 1:
        raise StoreFatal(f"the migration scripts have {len(heads)} heads: {sorted(heads)}")
    return frozenset(known), heads.pop()


def judge_schema(where: str, tables: Collection[str], current: str | None, *,
                 newer_only: bool = False) -> str | None:
    """The verdict on a database holding `tables` at revision `current` (None: no
    `alembic_version` row): its schema is this version's (read-only commands cannot upgrade
    it, and an older one lacks columns they read); `newer_only`: it is not a later
    version's. Returns `current`."""
    known, head = revisions()
    foreign = sorted(set(tables) - {"alembic_version"}) if current is None else []
    if foreign:  # upgrading would write our tables into another program's database
        shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
        raise StoreError(f"database {where} holds tables livereview did not create "
                         f"({shown}): point database_url at a database of its own")
    if current is not None and current not in known:
        raise StoreError(f"database {where} has schema revision {current}, which "
                         "this version of livereview does not know: a newer version wrote "
                         "it. Run that version, or restore a backup made by this one")
    if not newer_only and current != head:
        raise StoreError(f"database {where} is older than this version of "
                         "livereview: `livereview once` (or starting the daemon) upgrades it")
    return current


def damaged(path: Path, error: str) -> str:
    """One line: what is wrong with the file, what SQLite's own check says, what to do."""
    verdict = integrity_check(path)
    found = error if verdict == error else f"{error}; PRAGMA integrity_check: {verdict}"
    return (f"database {path} is damaged ({found}): stop livereview, move {path.name} and "
            f"its -wal and -shm files aside, and restore {path} from a backup (with no "
            "backup, start without it: the bot re-reads open merge requests, and its reply "
            "markers keep it from answering twice)")


def integrity_check(path: Path, limit_seconds: float = INTEGRITY_CHECK_SECONDS) -> str:
    """SQLite's verdict on the file (its first three problems), bounded in time."""
    deadline = time.monotonic() + limit_seconds
    try:
        connection = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        connection.execute("PRAGMA query_only = ON")
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        rows = connection.execute("PRAGMA integrity_check(3)").fetchall()
    except sqlite3.Error as exc:
        if time.monotonic() > deadline:
            return f"did not finish within {limit_seconds:g}s"
        return str(exc)
    finally:
        connection.close()
    return " ".join("; ".join(str(row[0]) for row in rows).split())  # one line


def read_only_hint(path: Path) -> str:
    """SQLite says 'unable to open database file' when it cannot create its WAL files: say
    why when the reason is a read-only directory or filesystem."""
    directory = path.parent
    try:
        read_only_fs = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return ""
    if read_only_fs or not os.access(directory, os.W_OK):
        return (f" ({directory} is read-only: the database and its -wal/-shm files must be "
                "writable)")
    return ""
