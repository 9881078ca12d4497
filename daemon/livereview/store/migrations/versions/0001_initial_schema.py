"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "ai_memory",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("source_message_id", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("ai_memory", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ai_memory_scope"), ["scope"], unique=False)

    op.create_table(
        "knowledge_refs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("host_message_id", sa.String(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("snippet", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("knowledge_refs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_knowledge_refs_host_message_id"), ["host_message_id"], unique=False
        )

    op.create_table(
        "mr_conversations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("author_id", sa.String(), nullable=False),
        sa.Column("author_username", sa.String(), nullable=False),
        sa.Column("author_name", sa.String(), nullable=False),
        sa.Column("source_branch", sa.String(), nullable=False),
        sa.Column("target_branch", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("head_sha", sa.String(), nullable=False),
        sa.Column("base_sha", sa.String(), nullable=False),
        sa.Column("start_sha", sa.String(), nullable=False),
        sa.Column("web_url", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "repo", "iid"),
    )
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mr_conversations_host"), ["host"], unique=False)

    op.create_table(
        "poll_watermarks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("listed_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "scope"),
    )
    op.create_table(
        "provider_identities",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("username", sa.String(), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host"),
    )
    op.create_table(
        "reply_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("repo", sa.String(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("host_thread_id", sa.String(), nullable=False),
        sa.Column("host_message_id", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_error", sa.String(), nullable=False),
        sa.Column("comment_created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("acked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("post_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("posted_message_id", sa.String(), nullable=True),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reply_jobs_state"), ["state"], unique=False)

    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("host_thread_id", sa.String(), nullable=False),
        sa.Column("host_message_id", sa.String(), nullable=False),
        sa.Column("detail", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["mr_conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_events_conversation_id"), ["conversation_id"], unique=False
        )

    op.create_table(
        "mr_commits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("sha", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("parent_ids", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["mr_conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("mr_commits", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mr_commits_conversation_id"), ["conversation_id"], unique=False
        )

    op.create_table(
        "mr_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("host_message_id", sa.String(), nullable=False),
        sa.Column("host_thread_id", sa.String(), nullable=False),
        sa.Column("in_reply_to", sa.String(), nullable=True),
        sa.Column("author_id", sa.String(), nullable=False),
        sa.Column("author_username", sa.String(), nullable=False),
        sa.Column("author_name", sa.String(), nullable=False),
        sa.Column("actor_kind", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["mr_conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("mr_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mr_messages_conversation_id"), ["conversation_id"], unique=False
        )

    op.create_table(
        "mr_reactions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("host_message_id", sa.String(), nullable=False),
        sa.Column("host_reaction_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("username", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["mr_conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("mr_reactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mr_reactions_conversation_id"), ["conversation_id"], unique=False
        )

    op.create_table(
        "mr_threads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("host_thread_id", sa.String(), nullable=False),
        sa.Column("individual", sa.Boolean(), nullable=False),
        sa.Column("resolvable", sa.Boolean(), nullable=False),
        sa.Column("resolved", sa.Boolean(), nullable=False),
        sa.Column("new_path", sa.String(), nullable=True),
        sa.Column("old_path", sa.String(), nullable=True),
        sa.Column("new_line", sa.Integer(), nullable=True),
        sa.Column("old_line", sa.Integer(), nullable=True),
        sa.Column("base_sha", sa.String(), nullable=True),
        sa.Column("start_sha", sa.String(), nullable=True),
        sa.Column("head_sha", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["mr_conversations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("mr_threads", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_mr_threads_conversation_id"), ["conversation_id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("mr_threads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_threads_conversation_id"))

    op.drop_table("mr_threads")
    with op.batch_alter_table("mr_reactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_reactions_conversation_id"))

    op.drop_table("mr_reactions")
    with op.batch_alter_table("mr_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_messages_conversation_id"))

    op.drop_table("mr_messages")
    with op.batch_alter_table("mr_commits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_commits_conversation_id"))

    op.drop_table("mr_commits")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_events_conversation_id"))

    op.drop_table("events")
    with op.batch_alter_table("reply_jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reply_jobs_state"))

    op.drop_table("reply_jobs")
    op.drop_table("provider_identities")
    op.drop_table("poll_watermarks")
    with op.batch_alter_table("mr_conversations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mr_conversations_host"))

    op.drop_table("mr_conversations")
    with op.batch_alter_table("knowledge_refs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_knowledge_refs_host_message_id"))

    op.drop_table("knowledge_refs")
    with op.batch_alter_table("ai_memory", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ai_memory_scope"))

    op.drop_table("ai_memory")
