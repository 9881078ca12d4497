"""reply_jobs: when an acknowledgement comment was being posted (hosts without reactions)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ack_started_at", sa.DateTime(timezone=True),
                                      nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.drop_column("ack_started_at")
