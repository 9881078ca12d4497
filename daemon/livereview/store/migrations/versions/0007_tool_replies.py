"""tool_replies: replies posted by `livereview mr` / `livereview mcp` (docs/DESIGN.md §13)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_replies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.String(), nullable=False),
        sa.Column("thread_id", sa.String(), nullable=False),
        sa.Column("body_digest", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reply_id", sa.String(), nullable=True),
        sa.Column("replied_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "repo", "comment_id"),
    )
    with op.batch_alter_table("tool_replies", schema=None) as batch_op:
        batch_op.create_index("ix_tool_replies_mr", ["host", "repo", "iid"], unique=False)
        batch_op.create_index(batch_op.f("ix_tool_replies_replied_at"), ["replied_at"],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tool_replies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tool_replies_replied_at"))
        batch_op.drop_index("ix_tool_replies_mr")
    op.drop_table("tool_replies")
