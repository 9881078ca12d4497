"""Bitbucket Cloud: reviews (diffstat, per-file diff, inline findings, summary, verdicts)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from livereview.hosts.base import Unsupported
from livereview.model import (
    DiffRefs,
    FileChange,
    FileDiff,
    InlineComment,
    Message,
    MRKey,
    PostedReview,
    Verdict,
)


class BitbucketCloudReview:
    """The Host protocol's review operations on Bitbucket Cloud (mixed into the adapter)."""

    async def diffstat(self, key: MRKey) -> list[FileChange]:
        raise Unsupported("Bitbucket Cloud diffstat: not yet")

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000
                         ) -> AsyncIterator[FileDiff]:
        raise Unsupported("Bitbucket Cloud diff_files: not yet")
        yield  # pragma: no cover - makes this an async generator

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        raise Unsupported("Bitbucket Cloud post_review: not yet")

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        raise Unsupported("Bitbucket Cloud reviews_posted: not yet")
