"""A migrated SQLite database, made once per test process and copied into each test's store
(docs/development.md, "The template database").

A brand-new store costs a full alembic upgrade (sixteen migrations, batch mode copying
tables), and a daemon started with `run` or `once` upgrades a new file in a child
interpreter (store/migrate_apart.py): seconds of CPU per test. The PostgreSQL run copies
a database migrated once (`CREATE DATABASE … TEMPLATE`, tests/databases.py); this is the
same for SQLite: `url_for(path)` hands the test a file that is a byte copy of one the real
`Store.open` created and migrated in this process, so the daemon and the CLI find it at
the newest revision and open it as on every start but the first.

The tests whose point is that the daemon or a command creates and migrates its own file
(file and folder modes, `db migrate`, a read-only command finding nothing, a sick or
foreign file) say so: `@pytest.mark.creates_database("why")`, and get the bare path.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
from pathlib import Path

from livereview.store.db import Store

MARKER = "creates_database"
MARKER_HELP = (f"{MARKER}(reason): the daemon or a command creates and migrates its own SQLite "
               "file: url_for(path) hands out the bare path, not a copy of the migrated "
               "template (tests/sqlite_template.py)")


class Template:
    """The bytes of a database the real `Store.open` made and migrated, once per process
    (a worker's tests may set themselves up in threads)."""

    def __init__(self) -> None:
        self._image: bytes | None = None
        self._lock = threading.Lock()

    def image(self) -> bytes:
        with self._lock:
            if self._image is None:
                self._image = _migrated_image()
            return self._image

    def seed(self, path: Path) -> None:
        """`path` holds a copy of the template unless something is there already: created
        as `Store.open` creates a database (store/engine.py `_create_private`): its folder
        0700 when this makes it, the file 0600."""
        if path.exists():
            return
        created = not path.parent.exists()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if created:  # mkdir's mode is masked by the umask
            path.parent.chmod(0o700)
        try:
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another thread of the test seeded it meanwhile
            return
        with os.fdopen(out, "wb") as file:
            file.write(self.image())


def _migrated_image() -> bytes:
    """A new file opened by the real `Store.open` (created, migrated to the newest revision
    by alembic), closed, and read back whole through SQLite: `serialize` includes whatever
    the write-ahead log still held."""
    with tempfile.TemporaryDirectory(prefix="livereview-template-") as folder:
        path = Path(folder) / "livereview.db"
        Store.open(f"sqlite:///{path}").close()
        connection = sqlite3.connect(path)
        try:
            return connection.serialize()
        finally:
            connection.close()


TEMPLATE = Template()
