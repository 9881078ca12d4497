"""Settings → the store and the tools' toolbox. Wiring lives in app, not in the I/O layers
it wires (docs/DESIGN.md §2); the host adapters are wired in app/hosts.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2

from livereview.app.hosts import connect
from livereview.store.faults import StoreError
from livereview.store.reads import Reader, sqlite_path
from livereview.tools.errors import ToolError
from livereview.tools.toolbox import Toolbox

if TYPE_CHECKING:  # the ORM: imported when a store is opened
    from livereview.settings.view import StoreView, ToolSettings
    from livereview.store.db import Store


def open_store(settings: StoreView, *, apart: bool = False) -> Store:
    """The configured database (created and migrated if need be; `apart`: the upgrade in
    a child process, for the long-running daemon: store/migrate_apart.py)."""
    from livereview.store.db import Store

    return Store.open(settings.database_url, settings.busy_timeout_seconds, apart=apart)


def _plain_reader(settings: StoreView) -> Reader | None:
    """The SQLite store read without the ORM, if it can be as it is: a file that exists at
    this version's schema. Otherwise None, and the store is opened as for every tool call:
    created, migrated, or refused with the one line that says why."""
    path = sqlite_path(settings.database_url)
    if path is None:
        return None
    try:
        return Reader.open(path, settings.busy_timeout_seconds)
    except StoreError:
        return None


def open_toolbox(settings: ToolSettings,
                 transport: httpx2.AsyncBaseTransport | None = None, *,
                 log_failures: bool = True, plain_reads: bool = False) -> Toolbox:
    """The daemon's store (created and migrated if need be: SQLite in WAL mode, so this
    runs beside `livereview run`) and one adapter per configured host. `plain_reads` (one
    CLI call): a SQLite store that needs nothing done is read without the ORM, which is
    loaded only if the call writes."""
    reader = _plain_reader(settings.daemon) if plain_reads else None
    if reader is None:
        try:
            store = open_store(settings.daemon)
        except StoreError as exc:
            raise ToolError(str(exc)) from exc

        def opened() -> Store:
            return store
    else:
        def opened() -> Store:
            return open_store(settings.daemon)
    # No metrics: nothing serves this process's counts (one CLI call, an MCP session), so
    # prometheus_client is not loaded for them (bench figure 17).
    hosts = {h.name: connect(h, None, transport) for h in settings.hosts}
    return Toolbox(settings, opened, hosts, log_failures=log_failures, reader=reader)
