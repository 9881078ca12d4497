"""A repository's local reviews (docs/DESIGN.md §14) read with sqlite3, for `review list`:
the twin of local_reviews.of_repo without the ORM (store/reads.py says why;
tests/unit/test_store_reads.py holds the two equal on one store)."""

from __future__ import annotations

import json

from livereview.core.local_model import (
    AuthorKind,
    FileStat,
    LocalMessage,
    LocalReview,
    LocalThread,
    ReviewStatus,
    ThreadKind,
)
from livereview.store.reads import Reader, at

_BRANCH_SEPARATOR = "\0"  # store/local_reviews.py: the branch rides in range_spec after a NUL


def _optional(value: object) -> int | None:
    return None if value is None else int(str(value))


def of_repo(reader: Reader, repo: str) -> list[LocalReview]:
    """The repository's reviews with their threads and messages, oldest first."""
    reviews, threads, messages = reader.together([
        ("SELECT id, repo, title, description, range_spec, base_sha, head_sha, worktree, "
         "status, files, created_at, updated_at FROM local_reviews WHERE repo = ? ORDER BY id",
         (repo,)),
        ("SELECT id, review_id, number, kind, path, line, old_line, code, resolved, created_at "
         "FROM local_review_threads WHERE review_id IN "
         "(SELECT id FROM local_reviews WHERE repo = ?) ORDER BY id", (repo,)),
        ("SELECT id, thread_id, author, author_kind, body, reactions, created_at FROM "
         "local_review_messages WHERE review_id IN "
         "(SELECT id FROM local_reviews WHERE repo = ?) ORDER BY id", (repo,)),
    ])
    said: dict[int, list[LocalMessage]] = {}
    for m_id, thread_id, author, kind, body, reactions, created in messages:
        said.setdefault(int(str(thread_id)), []).append(LocalMessage(
            int(str(m_id)), int(str(thread_id)), str(author), AuthorKind(str(kind)), str(body),
            at(str(created)), tuple(str(reactions).split())))
    of_review: dict[int, list[LocalThread]] = {}
    for t_id, review_id, number, kind, path, line, old_line, code, resolved, created in threads:
        if number is None:  # numbered by migration 0012; the ORM path skips it alike
            continue
        of_review.setdefault(int(str(review_id)), []).append(LocalThread(
            id=int(str(t_id)), kind=ThreadKind(str(kind)), path=str(path),
            line=_optional(line), code=str(code), resolved=bool(resolved),
            messages=tuple(said.get(int(str(t_id)), ())), created_at=at(str(created)),
            number=int(str(number)), old_line=_optional(old_line)))
    found = []
    for (r_id, top, title, description, range_spec, base_sha, head_sha, worktree, status,
         files, created, updated) in reviews:
        spec, _, branch = str(range_spec).partition(_BRANCH_SEPARATOR)
        found.append(LocalReview(
            id=int(str(r_id)), repo=str(top), title=str(title), description=str(description),
            range=spec, base_sha=str(base_sha), head_sha=str(head_sha),
            worktree=bool(worktree), status=ReviewStatus(str(status)),
            files=tuple(FileStat(str(p), str(o), str(s), int(a), int(d), bool(b))
                        for p, o, s, a, d, b in json.loads(str(files))),
            threads=tuple(of_review.get(int(str(r_id)), ())), created_at=at(str(created)),
            updated_at=at(str(updated)), branch=branch))
    return found
