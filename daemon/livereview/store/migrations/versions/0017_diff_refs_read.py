"""mr_conversations: whether the MR's diff refs were read (an MR read at first sight from its
GitLab listing row, which has no diff refs, and that asked nothing of the bot is stored
without them: none read is not "no diff refs")

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every row stored before this revision was stored with its diff refs read.
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("diff_refs_read", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.drop_column("diff_refs_read")
