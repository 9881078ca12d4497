"""mr_commits: each commit's message and author; mr_reactions: when a reaction was made
(where the host says: GitLab and GitHub do, Bitbucket does not)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Additive: rows of older snapshots read as "" / unknown until their MR is read again.
    with op.batch_alter_table("mr_commits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("message", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("author", sa.String(), nullable=False, server_default=""))
    with op.batch_alter_table("mr_reactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("created_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mr_reactions", schema=None) as batch_op:
        batch_op.drop_column("created_at")
    with op.batch_alter_table("mr_commits", schema=None) as batch_op:
        batch_op.drop_column("author")
        batch_op.drop_column("message")
