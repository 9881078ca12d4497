"""Alembic environment: migrations run on the connection livereview hands over."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from livereview.store import tables  # noqa: F401  (registers the tables on the metadata)

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things; batch mode copies tables
)
with context.begin_transaction():
    context.run_migrations()
