"""reply_claims: one exactly-once claim per answered comment, shared by daemon and tools

The comments already answered when this runs are claimed for good here (their posted reply
jobs and finished tool replies), so neither side answers them again after the upgrade.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "reply_claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("expires_at", _WHEN, nullable=False),
        sa.Column("reply_id", sa.String(), nullable=True),
        sa.Column("answered_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "repo", "comment_id"),
    )
    # The tools' replies first, then the daemon's for the comments no tool answered; one
    # row per comment even where an older version answered a comment twice.
    op.execute(
        "INSERT INTO reply_claims (host, repo, iid, comment_id, source, holder, expires_at, "
        "reply_id, answered_at) "
        "SELECT host, repo, iid, comment_id, 'tool', 'tool:' || body_digest, replied_at, "
        "reply_id, replied_at FROM tool_replies WHERE reply_id IS NOT NULL "
        "AND replied_at IS NOT NULL")
    op.execute(
        "INSERT INTO reply_claims (host, repo, iid, comment_id, source, holder, expires_at, "
        "reply_id, answered_at) "
        "SELECT j.host, j.repo, min(j.iid), j.host_message_id, 'daemon', "
        "'job:' || min(j.id), min(j.posted_at), min(j.posted_message_id), min(j.posted_at) "
        "FROM reply_jobs j WHERE j.state = 'posted' AND j.posted_at IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM reply_claims c WHERE c.host = j.host "
        "AND c.repo = j.repo AND c.comment_id = j.host_message_id) "
        "GROUP BY j.host, j.repo, j.host_message_id")


def downgrade() -> None:
    op.drop_table("reply_claims")
