"""`review list` and `review show` read without the ORM (docs/DESIGN.md §7, "Reading
without the ORM"): an agent reads a repository's local reviews in a loop. The repository's
`.livereview/` is checked as the workspace checks it (store/local_folder.py); a store that
is not there at this version's schema is left to the workspace (tools/local_review.py),
which creates or migrates it, or says in one line why it cannot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from livereview.core.local_model import (
    DATABASE_NAME,
    STATE_DIR,
    LocalReview,
    LocalThread,
    ReviewStatus,
    UnsafeStore,
)
from livereview.hosts.local.git import Git, NotARepository, tracked
from livereview.store.faults import StoreError
from livereview.store.local_folder import checked_folder
from livereview.store.local_reads import of_repo
from livereview.store.reads import Reader
from livereview.tools.errors import MAX_ID

if TYPE_CHECKING:
    from livereview.hosts.local.adapter import LocalHost

EXCLUDE_LINE = f"{STATE_DIR}/"
BUSY_TIMEOUT_SECONDS = 10.0  # the workspace's store waits as long (Store.open's default)


def _plain(repo: Path) -> tuple[Git, str, Reader] | None:
    """The repository's git, its top and its store opened without the ORM; None when the
    workspace must open the store instead."""
    try:
        git = Git.open(repo)
    except NotARepository:
        return None  # the workspace says so, in its words
    top = str(git.top)
    try:
        checked_folder(top, tracked)
    except UnsafeStore:
        return None
    try:
        reader = Reader.open(Path(top) / STATE_DIR / DATABASE_NAME, BUSY_TIMEOUT_SECONDS)
    except StoreError:
        return None
    git.exclude(EXCLUDE_LINE)
    return git, top, reader


def listed(repo: Path) -> list[LocalReview] | None:
    """The reviews of the repository holding `repo`, newest first (local_browse.reviews);
    None when the workspace must open the store instead."""
    opened = _plain(repo)
    if opened is None:
        return None
    _git, top, reader = opened
    with reader:
        found = of_repo(reader, top)
    return sorted(found, key=lambda r: r.id, reverse=True)


def shown(repo: Path, review_id: int) -> tuple[LocalReview, LocalHost] | None:
    """The review `show` prints and a host without a store to read its code, when showing
    it writes nothing: a review of this repository that cannot have become `merged`
    (local_review.review_of records that, `hosts.local.adapter.merged`). None otherwise, and
    for every error, which the workspace reports in its words."""
    if not 1 <= review_id <= MAX_ID:
        return None
    opened = _plain(repo)
    if opened is None:
        return None
    _git, top, reader = opened
    with reader:
        review = next((r for r in of_repo(reader, top) if r.id == review_id), None)
    if review is None or (review.branch and not review.worktree
                          and review.status is not ReviewStatus.MERGED):
        return None
    from livereview.hosts.local.adapter import LocalHost

    return review, LocalHost("local", None)


async def code_around(host: LocalHost, review: LocalReview, thread: LocalThread,
                      context: int = 2, files: dict[str, list[str]] | None = None
                      ) -> list[tuple[int, str]]:
    """The anchored line and `context` lines either side, numbered, for `show` (`host`: a
    workspace's, or one with no store: tools/local_list.py); `files` keeps each file's
    lines across calls (one git read per file, not per thread)."""
    if not thread.path or thread.line is None:
        return []
    files = {} if files is None else files
    if thread.path not in files:
        files[thread.path] = (await host.content_at(review, thread.path)).splitlines()
    lines = files[thread.path]
    first = max(1, thread.line - context)
    return [(n, lines[n - 1]) for n in range(first, min(len(lines), thread.line + context) + 1)]
