"""Reading local reviews for a page (DESIGN §11 "The web face"): the reviews of a repository,
one file's diff, and a cheap mark that changes whenever a review does.

The writes stay in tools/local_review.py (one function per action, shared by the CLI, the
MCP tools and the web face); these are the reads a browser needs that a terminal does not:
a page loads one file's diff at a time, and watches a review without loading it.
"""

from __future__ import annotations

import asyncio

from livereview.core.local_model import FileStat, LocalReview
from livereview.hosts.local.view import git_range
from livereview.store import local_reviews as rows
from livereview.tools.errors import MAX_ID
from livereview.tools.local_review import LocalReviewError, Workspace

MAX_DIFF_BYTES = 1_000_000  # one file's diff on a page; past it the page says so


async def reviews(ws: Workspace) -> list[LocalReview]:
    """The repository's reviews, newest first."""
    listed = await ws.book.reviews(ws.top)
    return sorted(listed, key=lambda r: r.id, reverse=True)


def changed_file(review: LocalReview, path: str) -> FileStat:
    found = next((f for f in review.files if f.path == path), None)
    if found is None:
        raise LocalReviewError(f"review {review.id} does not change {path}")
    return found


async def file_diff(ws: Workspace, review: LocalReview, path: str) -> str:
    """`git diff` of one file of the review (both names of a rename); "" for a binary file.
    Too large a diff raises LocalReviewError naming its size."""
    changed = changed_file(review, path)
    if changed.binary:
        return ""
    paths = (changed.old_path, changed.path) if changed.old_path != changed.path else (path,)
    text = await asyncio.to_thread(ws.git.diff, git_range(review), paths)
    size = len(text.encode())
    if size > MAX_DIFF_BYTES:
        raise LocalReviewError(f"{path}: the diff is too large to show ({size} bytes)")
    return text


async def change_mark(ws: Workspace, review_id: int) -> str:
    """Differs from the last call's whenever the review changed in between, in this process
    or another (an agent's `review update`, the AI's answer)."""
    if not 1 <= review_id <= MAX_ID:
        raise LocalReviewError(f"no local review {review_id}")
    try:
        return await ws.store.run(rows.change_mark, review_id)
    except LookupError as exc:
        raise LocalReviewError(str(exc)) from None

