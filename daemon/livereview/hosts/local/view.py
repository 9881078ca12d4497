"""A local review seen as a merge request (pure): its snapshot, threads, authors and file
changes in the model every host speaks (docs/DESIGN.md §14). hosts/local/adapter.py serves them."""

from __future__ import annotations

from collections.abc import Sequence

from livereview.core.local_model import (
    AuthorKind,
    LocalMessage,
    LocalReview,
    LocalThread,
    ReviewStatus,
)
from livereview.core.model import (
    Actor,
    Anchor,
    Commit,
    FileChange,
    FileStatus,
    MergeRequest,
    Message,
    MRKey,
    Reaction,
    Snapshot,
    Thread,
)
from livereview.hosts.local.git import GitRange

BOT = Actor(id="livereview", username="livereview", name="livereview")
_STATUS = {"added": FileStatus.ADDED, "deleted": FileStatus.REMOVED,
           "renamed": FileStatus.RENAMED, "modified": FileStatus.MODIFIED}
STATE = {ReviewStatus.MERGED: "merged"}  # every other status is an open MR


def actor(message: LocalMessage) -> Actor:
    if message.author_kind is AuthorKind.BOT:
        return BOT
    # A person's name is `git config user.name`, anyone's to choose: one that reads as the
    # bot's (Identity.is_me compares names, case-insensitively) gets its kind appended, as
    # Bitbucket Cloud's namesakes get their id, so no one else's words count as the bot's.
    name = message.author
    if name.lower() == BOT.username.lower():
        name = f"{name}~{message.author_kind.value}"
    # An agent is automated: the bot answers people, not another program (no loops).
    return Actor(id=f"{message.author_kind.value}:{message.author}", username=name,
                 name=message.author, bot=message.author_kind is AuthorKind.AGENT)


def git_range(review: LocalReview) -> GitRange:
    return GitRange(review.range, review.base_sha, review.head_sha, review.worktree)


def file_change(path: str, old_path: str, status: str, additions: int, deletions: int,
                binary: bool) -> FileChange:
    return FileChange(new_path=path, old_path=old_path, status=_STATUS[status],
                      additions=additions, deletions=deletions, binary=binary)


def snapshot_of(key: MRKey, review: LocalReview, commits: Sequence[Commit] = ()) -> Snapshot:
    threads = tuple(thread_of(review, t) for t in review.threads)
    opener = next((m for t in review.threads for m in t.messages
                   if m.author_kind is AuthorKind.HUMAN), None)
    author = actor(opener) if opener else Actor(id="human:you", username="you")
    mr = MergeRequest(
        key=key, title=review.title, description=review.description, author=author,
        source_branch=review.range, target_branch=review.base_sha[:12],
        state=STATE.get(review.status, "opened"), head_sha=review.head_sha,
        base_sha=review.base_sha, start_sha=review.base_sha, web_url=f"file://{review.repo}",
        created_at=review.created_at, updated_at=review.updated_at)
    return Snapshot(mr=mr, threads=threads, commits=tuple(commits))


def thread_of(review: LocalReview, thread: LocalThread) -> Thread:
    anchor = None
    if thread.path and (thread.line is not None or thread.old_line is not None):
        anchor = Anchor(new_path=thread.path, old_path=thread.path, new_line=thread.line,
                        old_line=thread.old_line, base_sha=review.base_sha,
                        start_sha=review.base_sha, head_sha=review.head_sha)
    messages = tuple(
        Message(id=str(m.id), thread_id=str(thread.id), author=actor(m), body=m.body,
                created_at=m.created_at, updated_at=m.created_at,
                reactions=tuple(Reaction(name=r, user=BOT) for r in m.reactions))
        for m in thread.messages)
    return Thread(id=str(thread.id), messages=messages, anchor=anchor, resolvable=True,
                  resolved=thread.resolved, individual=not thread.path)
