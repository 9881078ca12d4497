"""mr_conversations: who is asked to review the MR (being added as a reviewer is an event)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # JSON: [[user id, user name], …] as the host lists them (core/review_requests.py).
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reviewers", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.drop_column("reviewers")
