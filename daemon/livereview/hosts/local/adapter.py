"""The local host: merge requests that are local reviews of a git range (docs/DESIGN.md §14).

There is no server: the repository is read with git (git.py) and the
conversation lives in the store, reached through the `LocalBook` it is given (the store
layer's `ReviewBook`; hosts do not import the store). An MR key is (host name, the
repository's top-level directory, the review id). What the daemon does with any host —
poll, answer in threads, post a review — works unchanged; what has no local meaning
(mention inboxes) says so with `Unsupported`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from livereview.core.local_model import (
    DATABASE_NAME,
    STATE_DIR,
    AuthorKind,
    Feedback,
    LocalMessage,
    LocalReview,
    LocalThread,
    NewThread,
    ReviewStatus,
    ThreadKind,
    UnsafeStore,
)
from livereview.core.model import (
    Anchor,
    ChangedMR,
    DiffRefs,
    FileChange,
    FileDiff,
    Identity,
    InlineComment,
    Message,
    MRKey,
    People,
    PostedReview,
    Side,
    Snapshot,
    Thread,
    Verdict,
)
from livereview.hosts.base import Capabilities, Forbidden, NotFound, Unsupported
from livereview.hosts.diffs import EVERY_FILE, PathFilter
from livereview.hosts.local.git import Git, GitError
from livereview.hosts.local.view import (
    BOT,
    STATE,
    actor,
    file_change,
    git_range,
    snapshot_of,
    thread_of,
)


class LocalBook(Protocol):
    """One repository's reviews, as the host needs them (store.review_export.ReviewBook)."""

    async def review(self, review_id: int) -> LocalReview: ...

    async def reviews(self, repo: str) -> list[LocalReview]: ...

    async def add_thread(self, review_id: int, new: NewThread) -> LocalThread: ...

    async def add_message(self, review_id: int, thread_id: int, author: str,
                          author_kind: AuthorKind, body: str) -> LocalMessage: ...

    async def react(self, review_id: int, message_id: int, emoji: str) -> None: ...

    async def set_status(self, review_id: int, status: ReviewStatus) -> None: ...

    async def set_resolved(self, review_id: int, thread_id: int, resolved: bool) -> None: ...

    async def take_feedback(self, review_id: int, kinds: frozenset[AuthorKind],
                            deliver: bool = True) -> Feedback: ...


class LocalBooks(Protocol):
    """Each repository's book, by its top-level directory: the reviews live in the
    repository's own store (`.livereview/livereview.db`), whoever opens them — a person's
    command, an agent's tool, the daemon (store.review_export.RepoBooks)."""

    def __call__(self, top: str) -> LocalBook: ...

    async def close(self) -> None: ...


async def merged(git: Git, book: LocalBook, review: LocalReview) -> LocalReview:
    """The review, `merged` once a default branch holds its head commit; only a review
    recorded with a branch (`Git.branch_of`) can be: work on main itself is no merge."""
    if not review.branch or review.worktree or review.status is ReviewStatus.MERGED:
        return review
    if await asyncio.to_thread(git.merged_into, review.head_sha, review.branch) is None:
        return review
    await book.set_status(review.id, ReviewStatus.MERGED)
    return await book.review(review.id)


class LocalHost:
    """Local reviews of the repositories named as this host's repos: their directories,
    relative to `root` (the host's `url`, "/" by default; an MR key's repo is that path)."""

    type = "local"
    capabilities = Capabilities(reactions=True, resolve=True, threaded_general_comments=True,
                                instance_wide_listing=False, mention_inbox=False,
                                verdicts=True, review_batch=True)

    def __init__(self, name: str, books: LocalBooks | None, root: Path = Path("/")) -> None:
        self.name = name
        self._books = books
        self.root = root
        self._gits: dict[str, Git] = {}
        # A command's own host (local_respond.py) lists only the review the command names,
        # whatever the watermark: a command runs the AI for that review and no other.
        self.only: frozenset[int] | None = None

    def book(self, key: MRKey) -> LocalBook:
        if self._books is None:  # `check` connects hosts without opening any store
            raise Unsupported("local reviews live in a store this command did not open")
        try:
            return self._books(str(self.git(key.repo).top))
        except UnsafeStore as exc:  # the clone's `.livereview` is not its own: touch nothing
            raise Forbidden(str(exc)) from None

    def key_of(self, top: str | Path, review_id: int) -> MRKey:
        """The MR key of a review of the repository whose top-level directory is `top`."""
        return MRKey(self.name, os.path.relpath(top, self.root), review_id)

    @property
    def requests_sent(self) -> int:
        return 0  # git runs locally: nothing is sent anywhere

    @property
    def listing_is_cheap(self) -> bool:
        return True

    def git(self, repo: str) -> Git:
        if repo not in self._gits:
            try:
                git = Git.open(self.root / repo)
                git.exclude(f"{STATE_DIR}/")  # the reviews' store is the clone's own
                self._gits[repo] = git
            except GitError as exc:
                raise NotFound(str(exc)) from None
        return self._gits[repo]

    async def _review(self, key: MRKey) -> LocalReview:
        try:
            review = await self.book(key).review(key.iid)
        except LookupError as exc:
            raise NotFound(str(exc)) from None
        top = str(self.git(key.repo).top)
        if review.repo != top:
            raise NotFound(f"local review {key.iid} is of {review.repo}, not {top}")
        return review

    async def whoami(self) -> Identity:
        return Identity(host=self.name, user_id=BOT.id, username=BOT.username)

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        raise Unsupported("a local repository has no mention inbox (every review is listed)")

    async def clear_mentions(self, item_ids: list[str]) -> None:
        raise Unsupported("a local repository has no mention inbox (every review is listed)")

    async def repo_exists(self, repo: str) -> bool:
        try:
            await asyncio.to_thread(self.git, repo)
        except NotFound:
            return False
        return True

    async def list_changed_mrs(self, repos: tuple[str, ...],
                               since: datetime | None) -> list[ChangedMR]:
        changed = []
        for repo in repos:
            try:
                top = str(self.git(repo).top)
            except NotFound:
                continue  # gone since `check`: the poller's repo check says so
            if not (Path(top) / STATE_DIR / DATABASE_NAME).exists():
                continue  # nobody asked for a review here yet: create nothing in the clone
            book = self.book(MRKey(self.name, repo, 0))
            for listed in await book.reviews(top):
                if self.only is not None and listed.id not in self.only:
                    continue
                review = await merged(self.git(repo), book, listed)  # a merge is a change
                if self.only is not None or since is None or review.updated_at >= since:
                    changed.append(ChangedMR(repo, review.id, review.updated_at,
                                             STATE.get(review.status, "opened")))
        return changed

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        key = MRKey(self.name, repo, iid)
        review = await self._review(key)
        git = self.git(repo)
        try:
            commits = await asyncio.to_thread(git.commits, git_range(review))
        except GitError:  # a commit of the range is gone (rebased, gc'd): say none
            commits = []
        return snapshot_of(key, review, commits)

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        review = await self._review(key)
        thread = review.thread(_id(thread_id))
        if thread is None:
            raise NotFound(f"{key}: no thread {thread_id}")
        return thread_of(review, thread)

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        review = await self._review(key)
        return await asyncio.to_thread(self.git(key.repo).diff, git_range(review))

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        review = await self._review(key)
        return [c for c in (file_change(f.path, f.old_path, f.status, f.additions,
                                        f.deletions, f.binary) for f in review.files)
                if paths.wants(c)]

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                         paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        review = await self._review(key)
        git, at = self.git(key.repo), git_range(review)
        for f in review.files:
            change = file_change(f.path, f.old_path, f.status, f.additions, f.deletions,
                                 f.binary)
            if not paths.wants(change):
                continue
            if f.binary:
                yield FileDiff(change, "", skipped="binary")
                continue
            names = (f.old_path, f.path) if f.old_path != f.path else (f.path,)
            text = await asyncio.to_thread(git.diff, at, names)
            size = len(text.encode())
            yield (FileDiff(change, "", skipped=f"too large ({size} bytes)")
                   if size > max_file_bytes else FileDiff(change, text))

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        """A file at a commit; the review's working tree when `ref` is "" (HEAD ranges)."""
        try:
            data = await asyncio.to_thread(self.git(repo).show, ref, path)
        except (GitError, OSError) as exc:
            raise NotFound(f"{path} at {ref or 'the working tree'}: {exc}") from None
        return data.decode("utf-8", "replace")

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        prefix = directory.strip("/")
        try:
            out = await asyncio.to_thread(
                self.git(repo).run, "ls-tree", "--name-only", "-z", ref or "HEAD",
                "--", f"{prefix}/" if prefix else ".")
        except GitError as exc:
            raise NotFound(f"{directory} at {ref}: {exc}") from None
        names = [n for n in out.decode("utf-8", "replace").split("\0") if n]
        if not names:
            raise NotFound(f"no files in {directory or '/'} at {ref}")
        return names

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        review = await self._review(key)
        try:
            message = await self.book(key).add_message(review.id, _id(thread_id), BOT.username,
                                                  AuthorKind.BOT, body)
        except LookupError as exc:
            raise NotFound(str(exc)) from None
        return _message(message)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        review = await self._review(key)
        path = anchor.new_path or anchor.old_path if anchor else ""
        thread = await self.book(key).add_thread(review.id, NewThread(
            kind=ThreadKind.COMMENT, path=path, line=anchor.new_line if anchor else None,
            old_line=anchor.old_line if anchor else None, code="", author=BOT.username,
            author_kind=AuthorKind.BOT, body=body))
        return _message(thread.messages[0])

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        review = await self._review(key)
        try:
            await self.book(key).react(review.id, _id(message_id), emoji)
        except LookupError as exc:
            raise NotFound(str(exc)) from None

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        review = await self._review(key)
        try:
            await self.book(key).set_resolved(review.id, _id(thread_id), resolved)
        except LookupError as exc:
            raise NotFound(str(exc)) from None

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        review = await self._review(key)
        posted = []
        files: dict[str, list[str]] = {}
        for c in comments:
            new_side = c.side is Side.NEW
            if new_side and c.path not in files:  # the line's text: `update` re-anchors by it
                files[c.path] = (await self.content_at(review, c.path)).splitlines()
            lines = files.get(c.path, [])
            code = lines[c.line - 1] if new_side and 0 < c.line <= len(lines) else ""
            thread = await self.book(key).add_thread(review.id, NewThread(
                kind=ThreadKind.FINDING, path=c.path, line=c.line if new_side else None,
                old_line=c.old_line if new_side else c.line, code=code, author=BOT.username,
                author_kind=AuthorKind.BOT, body=c.body))
            posted.append(_message(thread.messages[0]))
        summary = None
        if body:
            thread = await self.book(key).add_thread(review.id, NewThread(
                kind=ThreadKind.COMMENT, path="", line=None, code="", author=BOT.username,
                author_kind=AuthorKind.BOT, body=body))
            summary = _message(thread.messages[0])
        if verdict is not Verdict.COMMENTED:
            await self.book(key).set_status(review.id, ReviewStatus(verdict.value))
        return PostedReview(review_id=summary.id if summary else "", summary=summary,
                            comments=tuple(posted), verdict_applied=verdict)

    async def content_at(self, review: LocalReview, path: str) -> str:
        """A file as the review sees it: at its head, or in the working tree ("" if gone)."""
        key = self.key_of(review.repo, review.id)
        try:
            return await self.file_content(key.repo, "" if review.worktree else review.head_sha,
                                           path)
        except NotFound:
            return ""

    async def people(self, key: MRKey) -> People:
        """A local review has no draft, reviewers or labels: approved by the bot when its
        status says so."""
        review = await self._review(key)
        approved = ((await self.whoami()).username,) \
            if review.status is ReviewStatus.APPROVED else ()
        return People(draft=False, reviewers=(), approved_by=approved, labels=())

    async def approve(self, key: MRKey) -> None:
        await self.book(key).set_status((await self._review(key)).id, ReviewStatus.APPROVED)

    async def unapprove(self, key: MRKey) -> None:
        await self.book(key).set_status((await self._review(key)).id, ReviewStatus.PENDING)

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        review = await self._review(key)
        message = await self.comment(key, body) if body else None
        await self.book(key).set_status(review.id, ReviewStatus.CHANGES_REQUESTED)
        return message

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        review = await self._review(key)
        return [_message(t.messages[0]) for t in review.threads
                if not t.path and t.messages and t.messages[0].author_kind is AuthorKind.BOT]

    async def close(self) -> None:
        if self._books is not None:
            await self._books.close()


def _id(text: str) -> int:
    if not text.isdigit():
        raise NotFound(f"no thread or message {text!r} (local ids are numbers)")
    return int(text)


def _message(message: LocalMessage) -> Message:
    return Message(id=str(message.id), thread_id=str(message.thread_id), author=actor(message),
                   body=message.body, created_at=message.created_at,
                   updated_at=message.created_at)
