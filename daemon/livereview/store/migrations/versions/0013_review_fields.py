"""review fields: a finding's category and confidence, the knowledge a run's prompts used
(with each reference's kind and relevance), a cited reference's kind and relevance, an
index to find an MR's reviews

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Additive only, with server defaults, so rows written before keep reading (and an
    # older daemon beside a newer schema still inserts).
    with op.batch_alter_table("review_findings") as table:
        table.add_column(sa.Column("category", sa.String(), nullable=False,
                                   server_default="general"))
        table.add_column(sa.Column("confidence", sa.Float(), nullable=False,
                                   server_default="1.0"))
    with op.batch_alter_table("review_runs") as table:
        table.add_column(sa.Column("knowledge", sa.Text(), nullable=False,
                                   server_default="[]"))
    with op.batch_alter_table("knowledge_refs") as table:
        table.add_column(sa.Column("kind", sa.String(), nullable=False, server_default=""))
        table.add_column(sa.Column("relevance", sa.Float(), nullable=False,
                                   server_default="0"))
    # Asked per MR synced: does a review await a reply? (reviews.awaiting)
    op.create_index("ix_review_runs_mr", "review_runs", ["host", "repo", "iid"])


def downgrade() -> None:
    op.drop_index("ix_review_runs_mr", table_name="review_runs")
    with op.batch_alter_table("knowledge_refs") as table:
        table.drop_column("relevance")
        table.drop_column("kind")
    with op.batch_alter_table("review_runs") as table:
        table.drop_column("knowledge")
    with op.batch_alter_table("review_findings") as table:
        table.drop_column("confidence")
        table.drop_column("category")
