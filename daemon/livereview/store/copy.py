"""Copy every row of one livereview database into another (SQLite → PostgreSQL, docs/DESIGN.md §12).

Both must be at this version's schema revision. Rows keep their ids (foreign keys point at
them), so the target must be empty — or hold exactly this copy already: then nothing is
written and the copy is reported as done (running it twice is harmless). The whole copy is
one transaction on the target, checked row count by row count before it commits: an
interrupted copy leaves the target empty, never half-filled. Leases are not copied: they
are who-does-what-now, and nothing runs during a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, Table, func, select, text
from sqlmodel import SQLModel

from livereview.store import tables
from livereview.store.engine import StoreError

BATCH = 2_000
SKIPPED = frozenset({tables.Lease.__tablename__})
Progress = Callable[[str, int, int], None]  # (table, rows copied, rows in it)


class CopyRefused(StoreError):
    """The target holds other data than this copy: nothing was written."""


@dataclass
class CopyReport:
    counts: dict[str, int] = field(default_factory=dict)  # table → rows (in both now)
    already: bool = False  # the target held this copy already: nothing written


def copied_tables() -> list[Table]:
    """Every table of the schema, parents before children."""
    return [t for t in SQLModel.metadata.sorted_tables if t.name not in SKIPPED]


def _count(connection: Connection, table: Table) -> int:
    return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def copy(source: Engine, target: Engine, progress: Progress | None = None) -> CopyReport:
    report = CopyReport()
    with source.connect() as reading, target.begin() as writing:
        want = {t.name: _count(reading, t) for t in copied_tables()}
        have = {t.name: _count(writing, t) for t in copied_tables()}
        if have == want:
            report.counts, report.already = want, True
            return report
        if any(have.values()):
            differing = ", ".join(f"{name} {have[name]} rows (source {want[name]})"
                                  for name in want if have[name] != want[name])
            raise CopyRefused(f"the target database already holds other data ({differing}): "
                              "copy into an empty database")
        for table in copied_tables():
            _copy_table(reading, writing, table, want[table.name], progress)
            copied = _count(writing, table)
            if copied != want[table.name]:
                raise StoreError(f"copy of {table.name}: {copied} rows written, "
                                 f"{want[table.name]} in the source; nothing was committed")
            report.counts[table.name] = copied
        if writing.dialect.name == "postgresql":
            _reset_sequences(writing)
    return report


def _copy_table(reading: Connection, writing: Connection, table: Table, total: int,
                progress: Progress | None) -> None:
    done = 0
    order = list(table.primary_key.columns)
    rows = reading.execution_options(yield_per=BATCH).execute(
        select(table).order_by(*order))
    for batch in rows.partitions():
        writing.execute(table.insert(), [dict(row._mapping) for row in batch])
        done += len(batch)
        if progress is not None:
            progress(table.name, done, total)
    if progress is not None and total == 0:
        progress(table.name, 0, 0)


def _reset_sequences(writing: Connection) -> None:
    """Rows came with their ids: PostgreSQL's id sequences must start after them, or the
    daemon's next insert collides with a copied row."""
    for table in copied_tables():
        if "id" not in table.columns or not table.columns["id"].autoincrement:
            continue
        writing.execute(text(
            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "  # noqa: S608 - our own table names
            f"coalesce((SELECT max(id) FROM {table.name}), 0) + 1, false)"))
