"""local_reviews, local_review_threads, local_review_messages: reviews of local git ranges

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "local_reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("range_spec", sa.String(), nullable=False),
        sa.Column("base_sha", sa.String(), nullable=False),
        sa.Column("head_sha", sa.String(), nullable=False),
        sa.Column("worktree", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("files", sa.Text(), nullable=False),
        sa.Column("delivered_message_id", sa.Integer(), nullable=False),
        sa.Column("delivered_status", sa.String(), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_local_reviews_repo", "local_reviews", ["repo"])
    op.create_table(
        "local_review_threads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("old_line", sa.Integer(), nullable=True),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("resolved", sa.Boolean(), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.ForeignKeyConstraint(["review_id"], ["local_reviews.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_local_review_threads_review_id", "local_review_threads", ["review_id"])
    op.create_table(
        "local_review_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(), nullable=False),
        sa.Column("author_kind", sa.String(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("reactions", sa.String(), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.ForeignKeyConstraint(["review_id"], ["local_reviews.id"]),
        sa.ForeignKeyConstraint(["thread_id"], ["local_review_threads.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_local_review_messages_review_id", "local_review_messages",
                    ["review_id"])
    op.create_index("ix_local_review_messages_thread_id", "local_review_messages",
                    ["thread_id"])


def downgrade() -> None:
    op.drop_table("local_review_messages")
    op.drop_table("local_review_threads")
    op.drop_table("local_reviews")
