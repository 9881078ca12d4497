"""Every test starts with structlog's defaults: a command run in-process (`main([...])`)
configures logging for the whole process, and a later test's `capture_logs` would then
miss the events that configuration filters out (the demo logs warnings only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    yield
    structlog.reset_defaults()


pytest_plugins = ["tests.databases"]  # `database_url`: SQLite and PostgreSQL (docs/DESIGN.md §12)
