"""Local reviews, kept: the store is the truth, `.livereview/review.json` its export.

Every write goes through a `ReviewBook`, which writes the repository's JSON file right after
the transaction that changed it, atomically (a temporary file, then a rename): a reader — a
person's editor, an agent — sees the old file or the new one, never half of one. Both happen
under the store's `WriteLock` (store/local_lock.py), so the last export is of the last write;
the folder is checked first (store/local_folder.py): nothing is written outside the clone.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from sqlmodel import Session

from livereview.core.local_model import (
    DATABASE_NAME,
    STATE_DIR,
    AuthorKind,
    Feedback,
    LocalMessage,
    LocalReview,
    LocalThread,
    NewThread,
    RangeState,
    ReviewStatus,
    as_dict,
)
from livereview.store import local_reviews as rows
from livereview.store.db import Store
from livereview.store.local_folder import (
    EXPORT_NAME,
    RUNNER_LOCK_NAME,
    Tracked,
    checked_folder,
    write_atomically,
)
from livereview.store.local_lock import WriteLock

P = ParamSpec("P")
R = TypeVar("R")


def database_url(repo: str | Path) -> str:
    return f"sqlite:///{Path(repo) / STATE_DIR / DATABASE_NAME}"


def export_path(repo: str | Path) -> Path:
    return Path(repo) / STATE_DIR / EXPORT_NAME


def export(reviews: list[LocalReview], repo: str | Path) -> Path:
    """Every review of the repository, oldest first, as `.livereview/review.json`."""
    return write_atomically(
        Path(repo) / STATE_DIR, EXPORT_NAME,
        json.dumps({"version": 1, "reviews": [as_dict(r) for r in reviews]}, indent=2,
                   ensure_ascii=False) + "\n")


class ReviewBook:
    """The local reviews of one store; async (the host and the MCP server call it from the
    event loop), each call one transaction on the store's thread."""

    def __init__(self, store: Store, lock: WriteLock,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.store = store
        self.lock = lock
        self.runner = WriteLock(lock.folder, RUNNER_LOCK_NAME)
        self.clock = clock or (lambda: datetime.now(UTC))

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """The store to this task alone (re-entrant): what it reads stays true until it has
        written and exported; another process's writer waits."""
        async with self.lock.held():
            yield

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The AI runner's turn on this store (store/local_lock.py): another process's
        runner waits, then finds this one's work stored and done."""
        async with self.runner.held():
            yield

    async def _write(self, repo_of: int, fn: Callable[Concatenate[Session, P], R],
                     *args: P.args, **kwargs: P.kwargs) -> R:
        async with self.writing():
            result = await self.store.run(fn, *args, **kwargs)
            await self.export(repo_of)
        return result

    async def export(self, review_id: int) -> Path:
        review = await self.review(review_id)
        reviews = await self.store.run(rows.of_repo, review.repo)
        return export(reviews, review.repo)

    async def review(self, review_id: int) -> LocalReview:
        return await self.store.run(rows.need, review_id)

    async def reviews(self, repo: str) -> list[LocalReview]:
        return await self.store.run(rows.of_repo, repo)

    async def create(self, repo: str, title: str, description: str, at: RangeState,
                     threads: list[NewThread]) -> LocalReview:
        async with self.writing():
            review = await self.store.run(rows.create, repo, title, description, at, threads,
                                          self.clock())
            await self.export(review.id)
        return review

    async def add_thread(self, review_id: int, new: NewThread) -> LocalThread:
        return await self._write(review_id, rows.add_thread, review_id, new, self.clock())

    async def add_message(self, review_id: int, thread_id: int, author: str,
                          author_kind: AuthorKind, body: str) -> LocalMessage:
        return await self._write(review_id, rows.add_message, review_id, thread_id, author,
                                 author_kind, body, self.clock())

    async def react(self, review_id: int, message_id: int, emoji: str) -> None:
        await self._write(review_id, rows.react, review_id, message_id, emoji, self.clock())

    async def set_status(self, review_id: int, status: ReviewStatus) -> None:
        await self._write(review_id, rows.set_status, review_id, status, self.clock())

    async def set_resolved(self, review_id: int, thread_id: int, resolved: bool) -> None:
        await self._write(review_id, rows.set_resolved, review_id, thread_id, resolved,
                          self.clock())

    async def move_range(self, review_id: int, at: RangeState,
                         anchors: dict[int, tuple[int | None, str]]) -> None:
        await self._write(review_id, rows.move_range, review_id, at, anchors, self.clock())

    async def take_feedback(self, review_id: int, kinds: frozenset[AuthorKind],
                            deliver: bool = True) -> Feedback:
        return await self.store.run(rows.take_feedback, review_id, kinds, deliver)

    def close(self) -> None:
        self.store.close()
        self.lock.close()
        self.runner.close()


class RepoBooks:
    """Each repository's book, opened (its folder checked, its store created and migrated)
    on first use; `tracked` is git's word on what the repository tracks (hosts.local_git),
    as every process that opens a store must ask it: `UnsafeStore` when the folder is not
    the clone's own."""

    def __init__(self, tracked: Tracked) -> None:
        self._tracked = tracked
        self._books: dict[str, ReviewBook] = {}

    def __call__(self, top: str) -> ReviewBook:
        if top not in self._books:
            folder = checked_folder(top, self._tracked)
            self._books[top] = ReviewBook(Store.open(database_url(top)), WriteLock(folder))
        return self._books[top]

    async def close(self) -> None:
        for book in self._books.values():
            book.close()
        self._books.clear()
