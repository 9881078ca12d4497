"""review_runs, review_findings, review_files: reviews as persisted runs (docs/DESIGN.md §11)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _when(name: str, nullable: bool = True) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _text(name: str) -> sa.Column[str]:
    return sa.Column(name, sa.String(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "review_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        _text("key"), _text("token"), _text("host"), _text("repo"),
        sa.Column("iid", sa.Integer(), nullable=False),
        _text("trigger"), _text("trigger_thread_id"), _text("trigger_message_id"),
        sa.Column("explicit", sa.Boolean(), nullable=False),
        _text("state"),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _when("next_attempt_at", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        _text("head_sha"), _text("base_sha"), _text("start_sha"),
        sa.Column("previous_run_id", sa.Integer(), nullable=True),
        _text("previous_head_sha"),
        sa.Column("files_done", sa.Integer(), nullable=False),
        sa.Column("files_reviewed", sa.Integer(), nullable=False),
        sa.Column("skipped_total", sa.Integer(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("not_raised_again", sa.Integer(), nullable=False),
        _text("verdict"), _text("verdict_applied"), _text("review_id"),
        _text("summary_message_id"),
        _when("ack_started_at"), _when("acked_at"), _when("post_started_at"), _when("posted_at"),
        _when("verdict_started_at"), _when("verdict_at"), _when("notify_started_at"),
        _text("notice_message_id"), _text("notifiers_done"),
        _when("completed_at"), _when("created_at", nullable=False),
        _when("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
        sa.UniqueConstraint("token"),
    )
    with op.batch_alter_table("review_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_runs_state"), ["state"], unique=False)
    op.create_table(
        "review_findings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        _text("host"), _text("repo"),
        sa.Column("iid", sa.Integer(), nullable=False),
        _text("severity"), _text("path"),
        sa.Column("line", sa.Integer(), nullable=False),
        _text("side"), _text("old_path"),
        sa.Column("old_line", sa.Integer(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        _text("fingerprint"), _text("placement"),
        _when("post_started_at"), _text("message_id"), _text("thread_id"),
        sa.Column("fixed_by_run_id", sa.Integer(), nullable=True),
        _when("fix_started_at"), _when("fixed_at"),
        sa.ForeignKeyConstraint(["run_id"], ["review_runs.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "number"),
    )
    with op.batch_alter_table("review_findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_findings_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_review_findings_fingerprint"), ["fingerprint"],
                              unique=False)
        batch_op.create_index(batch_op.f("ix_review_findings_thread_id"), ["thread_id"],
                              unique=False)
    op.create_table(
        "review_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        _text("path"), _text("digest"), _text("skipped"),
        sa.ForeignKeyConstraint(["run_id"], ["review_runs.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("review_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_files_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_table("review_files")
    op.drop_table("review_findings")
    op.drop_table("review_runs")
