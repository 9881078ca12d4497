"""mr_sightings: MRs known from the listing alone, not read until they change

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "mr_sightings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.Column("seen_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "repo", "iid"),
    )
    op.create_index("ix_mr_sightings_host", "mr_sightings", ["host"])


def downgrade() -> None:
    op.drop_index("ix_mr_sightings_host", table_name="mr_sightings")
    op.drop_table("mr_sightings")
