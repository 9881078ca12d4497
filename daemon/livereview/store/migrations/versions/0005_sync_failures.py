"""mr_sync_failures: MRs whose fetch failed, synced again until it works, across restarts

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mr_sync_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("first_failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "repo", "iid"),
    )
    with op.batch_alter_table("mr_sync_failures", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mr_sync_failures_host"), ["host"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("mr_sync_failures", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_sync_failures_host"))
    op.drop_table("mr_sync_failures")
