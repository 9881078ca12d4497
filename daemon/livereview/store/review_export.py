"""Local reviews, kept: the store is the truth, `.livereview/review.json` its export.

Every write goes through a `ReviewBook`, which writes the repository's JSON file right after
the transaction that changed it, atomically (a temporary file, then a rename): a reader — a
person's editor, an agent — sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
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

EXPORT_NAME = "review.json"
P = ParamSpec("P")
R = TypeVar("R")


def database_url(repo: str | Path) -> str:
    return f"sqlite:///{Path(repo) / STATE_DIR / DATABASE_NAME}"


def export_path(repo: str | Path) -> Path:
    return Path(repo) / STATE_DIR / EXPORT_NAME


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def export(reviews: list[LocalReview], repo: str | Path) -> Path:
    """Every review of the repository, oldest first, as `.livereview/review.json`."""
    path = export_path(repo)
    write_atomically(path, json.dumps({"version": 1, "reviews": [as_dict(r) for r in reviews]},
                                      indent=2, ensure_ascii=False) + "\n")
    return path


class ReviewBook:
    """The local reviews of one store; async (the host and the MCP server call it from the
    event loop), each call one transaction on the store's thread."""

    def __init__(self, store: Store, clock: Callable[[], datetime] | None = None) -> None:
        self.store = store
        self.clock = clock or (lambda: datetime.now(UTC))

    async def _write(self, repo_of: int, fn: Callable[Concatenate[Session, P], R],
                     *args: P.args, **kwargs: P.kwargs) -> R:
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


class RepoBooks:
    """Each repository's book, opened (its store created and migrated) on first use."""

    def __init__(self) -> None:
        self._books: dict[str, ReviewBook] = {}

    def __call__(self, top: str) -> ReviewBook:
        if top not in self._books:
            (Path(top) / STATE_DIR).mkdir(exist_ok=True)
            self._books[top] = ReviewBook(Store.open(database_url(top)))
        return self._books[top]

    async def close(self) -> None:
        for book in self._books.values():
            book.store.close()
        self._books.clear()
