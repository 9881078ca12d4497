"""local_review_threads.number: a thread's number within its review (`review reply 2 1` is
thread 1 of review 2), given to the threads of older stores in order of creation

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("local_review_threads", sa.Column("number", sa.Integer(), nullable=True))
    # Ids grow with every thread of the store, so a thread's rank by id within its review
    # is its rank by creation: the same numbers store/local_reviews.py gives new threads.
    # A correlated subquery, not a window function: one statement SQLite and PostgreSQL
    # both run.
    op.execute(
        "UPDATE local_review_threads SET number = ("
        "SELECT COUNT(*) FROM local_review_threads AS earlier "
        "WHERE earlier.review_id = local_review_threads.review_id "
        "AND earlier.id <= local_review_threads.id)")
    op.create_index("ix_local_review_threads_number", "local_review_threads",
                    ["review_id", "number"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_local_review_threads_number", table_name="local_review_threads")
    op.drop_column("local_review_threads", "number")
