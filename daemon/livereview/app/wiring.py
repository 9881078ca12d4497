"""Settings → the store and the tools' toolbox. Wiring lives in app, not in the I/O layers
it wires (docs/DESIGN.md §2); the host adapters are wired in app/hosts.py."""

from __future__ import annotations

import httpx2

from livereview.app.hosts import connect
from livereview.metrics import Metrics
from livereview.settings import DaemonSettings, Settings
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.tools.errors import ToolError
from livereview.tools.toolbox import Toolbox


def open_store(settings: DaemonSettings) -> Store:
    """The configured database (created and migrated if need be)."""
    return Store.open(settings.database_url, settings.busy_timeout_seconds)


def open_toolbox(settings: Settings,
                 transport: httpx2.AsyncBaseTransport | None = None, *,
                 log_failures: bool = True) -> Toolbox:
    """The daemon's store (created and migrated if need be: SQLite in WAL mode, so this
    runs beside `livereview run`) and one adapter per configured host."""
    try:
        store = open_store(settings.daemon)
    except StoreError as exc:
        raise ToolError(str(exc)) from exc
    metrics = Metrics()
    hosts = {h.name: connect(h, metrics, transport) for h in settings.hosts}
    return Toolbox(settings, store, hosts, log_failures=log_failures)
