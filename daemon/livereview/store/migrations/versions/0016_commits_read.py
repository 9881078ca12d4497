"""mr_conversations: whether the MR's commits were read (an MR read at first sight that asked
nothing of the bot is stored without them: none read is not "no commits")

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every row stored before this revision was stored with its commits read.
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("commits_read", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.drop_column("commits_read")
