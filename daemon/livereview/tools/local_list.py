"""`review list` read without the ORM (docs/DESIGN.md §7, "Reading without the ORM"): an
agent lists a repository's local reviews in a loop. The repository's `.livereview/` is
checked as the workspace checks it (store/local_folder.py); a store that is not there at
this version's schema is left to the workspace (tools/local_review.py), which creates or
migrates it, or says in one line why it cannot."""

from __future__ import annotations

from pathlib import Path

from livereview.core.local_model import DATABASE_NAME, STATE_DIR, LocalReview, UnsafeStore
from livereview.hosts.local.git import Git, NotARepository, tracked
from livereview.store.faults import StoreError
from livereview.store.local_folder import checked_folder
from livereview.store.local_reads import of_repo
from livereview.store.reads import Reader

EXCLUDE_LINE = f"{STATE_DIR}/"
BUSY_TIMEOUT_SECONDS = 10.0  # the workspace's store waits as long (Store.open's default)


def listed(repo: Path) -> list[LocalReview] | None:
    """The reviews of the repository holding `repo`, newest first (local_browse.reviews);
    None when the workspace must open the store instead."""
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
    with reader:
        found = of_repo(reader, top)
    return sorted(found, key=lambda r: r.id, reverse=True)
