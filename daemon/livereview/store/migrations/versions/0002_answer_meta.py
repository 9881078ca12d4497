"""reply_jobs: the structured answer's metadata and the lessons its prompt used

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("answer_meta", sa.Text(), nullable=True))
        batch_op.add_column(
            sa.Column("lessons_used", sa.String(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.drop_column("lessons_used")
        batch_op.drop_column("answer_meta")
