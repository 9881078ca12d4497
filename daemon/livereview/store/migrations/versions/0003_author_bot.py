"""mr_messages: whether the host marks the author as automated (a bot account)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mr_messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("author_bot", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("mr_messages", schema=None) as batch_op:
        batch_op.drop_column("author_bot")
