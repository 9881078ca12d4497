"""Bitbucket Cloud: reviews — diffstat, the diff one file at a time, inline findings, the
summary, approve / request changes.

Docs: https://developer.atlassian.com/cloud/bitbucket/rest/api-group-commits/
#api-repositories-workspace-repo-slug-diffstat-spec-get (paged `diffstat` entries: status,
lines_added, lines_removed, old/new {path}), …#api-repositories-workspace-repo-slug-diff-spec-get
(`path` limits the diff to files, `topic=true` is the PR's three-dot diff),
https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pullrequests/
#api-repositories-workspace-repo-slug-pullrequests-pull-request-id-approve-post (and DELETE),
…-request-changes-post. The same verdict twice answers 409, withdrawing one not given 404
(https://github.com/hirakiuc/tinybucket/pull/75).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx2

from livereview.core.model import (
    Anchor,
    DiffRefs,
    FileChange,
    FileDiff,
    FileStatus,
    Identity,
    InlineComment,
    Message,
    MRKey,
    People,
    PostedReview,
    Snapshot,
    Verdict,
)
from livereview.hosts.base import Conflict, NotFound
from livereview.hosts.bitbucket_cloud import payloads
from livereview.hosts.bitbucket_cloud.budget import Use
from livereview.hosts.diffs import (
    EVERY_FILE,
    PathFilter,
    anchor_of,
    hunks,
    looks_binary,
    own_general_comments,
    split_git_diff,
    too_large,
)
from livereview.hosts.payload import JsonObject
from livereview.hosts.revalidate import Keep, Revalidate

DIFF_BATCH = 25  # files per /diff request
_STATUS = {"added": FileStatus.ADDED, "removed": FileStatus.REMOVED,
           "renamed": FileStatus.RENAMED}  # modified, merge conflict, …: modified


def _file_diff(row: FileChange, text: str, max_file_bytes: int) -> FileDiff:
    if looks_binary(text):
        return FileDiff(replace(row, binary=True), "", "binary")
    if len(text.encode()) > max_file_bytes:
        return FileDiff(row, "", too_large(len(text.encode())))
    return FileDiff(row, hunks(text))


def change(entry: JsonObject) -> FileChange:
    new, old = entry.obj_or_none("new"), entry.obj_or_none("old")
    side = new or old
    if side is None:
        raise entry.error("new", "missing (and no old either)")
    new_path = side.text("path")
    return FileChange(new_path=new_path, old_path=old.text("path") if old else new_path,
                      status=_STATUS.get(entry.text_or("status"), FileStatus.MODIFIED),
                      additions=entry.number("lines_added"),
                      deletions=entry.number("lines_removed"))


class BitbucketCloudReview:
    """The Host protocol's review operations on Bitbucket Cloud (mixed into the adapter)."""

    if TYPE_CHECKING:
        def _pr(self, key: MRKey) -> str: ...

        def _repo(self, repo: str) -> str: ...

        async def _one(self, method: str, path: str, use: Use = Use.READ, *,
                       conditional: bool = False, **kwargs: Any) -> JsonObject: ...

        async def _request(self, method: str, path: str, use: Use, **kwargs: Any
                           ) -> httpx2.Response: ...

        def _pages(self, path: str, params: dict[str, Any] | None = None,
                   use: Use = Use.READ, *, conditional: Revalidate = False,
                   keep: Keep = None) -> AsyncGenerator[list[JsonObject], None]: ...

        def _forget(self, key: MRKey) -> None: ...

        async def whoami(self) -> Identity: ...

        async def fetch_mr(self, repo: str, iid: int,
                           reactions_for: frozenset[str] = frozenset()) -> Snapshot: ...

        async def comment(self, key: MRKey, body: str,
                          anchor: Anchor | None = None) -> Message: ...

    async def _spec(self, key: MRKey) -> str:
        """`source..destination` of the PR now (its /diffstat redirects there)."""
        pr = await self._one("GET", self._pr(key), conditional=True)
        ends = [payloads.short_hash(pr.obj_or_none(end)) for end in ("source", "destination")]
        for sha in ends:
            if not sha.isalnum():
                raise pr.error("source", f"not a commit hash: {sha[:40]!r}")
        return "..".join(ends)

    async def _stat_pages(self, key: MRKey, spec: str, wanted: PathFilter = EVERY_FILE
                          ) -> AsyncGenerator[list[FileChange], None]:
        """Pages of the diffstat rows `wanted` wants: plain paths are asked of Bitbucket
        (`path`, repeated: the diffstat of those files alone), globs filtered here."""
        path = f"{self._repo(key.repo)}/diffstat/{spec}"
        params: dict[str, Any] = {"topic": "true"}
        if wanted.literal is not None:
            params["path"] = sorted(wanted.literal)
        async with aclosing(self._pages(path, params)) as pages:
            async for page in pages:
                yield [row for row in (change(entry) for entry in page) if wanted.wants(row)]

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        return [row async for page in self.diffstat_pages(key, paths) for row in page]

    async def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                             ) -> AsyncIterator[list[FileChange]]:
        spec = await self._spec(key)
        async with aclosing(self._stat_pages(key, spec, paths)) as pages:
            async for page in pages:
                yield page

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                         paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        """A page of the diffstat, then its files' diffs DIFF_BATCH at a time (`path=`
        repeated): memory holds one page of rows and one batch of files, and an MR of
        3 000 files costs ~150 requests of the hourly quota, not 3 000; one file of it,
        asked for by its path, three."""
        spec = await self._spec(key)
        async with aclosing(self._stat_pages(key, spec, paths)) as pages:
            async for page in pages:
                for start in range(0, len(page), DIFF_BATCH):
                    batch = page[start:start + DIFF_BATCH]
                    names = list(dict.fromkeys(p for row in batch
                                               for p in (row.new_path, row.old_path)))
                    response = await self._request(
                        "GET", f"{self._repo(key.repo)}/diff/{spec}", Use.READ,
                        params={"path": names, "topic": "true"})
                    by_file = split_git_diff(response.text)
                    for row in batch:
                        yield _file_diff(row, by_file.get((row.old_path, row.new_path), ""),
                                         max_file_bytes)

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        """Each finding an inline comment (`inline {path, to|from}`), the summary a general
        comment, then the verdict (approve or request changes): no batch on Bitbucket."""
        posted = [await self.comment(key, c.body, anchor_of(refs, c)) for c in comments]
        summary = await self.comment(key, body)
        if verdict is Verdict.APPROVED:
            await self.approve(key)
        elif verdict is Verdict.CHANGES_REQUESTED:
            await self.request_changes(key)
        return PostedReview(summary.id, summary, tuple(posted), verdict)

    async def _verdict(self, method: str, what: str, key: MRKey) -> None:
        self._forget(key)
        try:
            await self._request(method, f"{self._pr(key)}/{what}", Use.WRITE)
        except Conflict:  # the same verdict twice: it stands
            if method != "POST":
                raise
        except NotFound:  # withdrawing a verdict not given: already so
            if method != "DELETE":
                raise

    async def people(self, key: MRKey) -> People:
        """The pull request's `draft` and `participants` (role REVIEWER; `approved`), from
        …/api-group-pullrequests/#api-repositories-workspace-repo-slug-pullrequests-pull-
        request-id-get. Bitbucket Cloud pull requests have no labels."""
        pr = await self._one("GET", self._pr(key))
        people = [(p.text_or("role"), p.flag("approved") if p.has("approved") else False,
                   _name(p.obj_or_none("user"))) for p in pr.objects("participants")]
        return People(draft=pr.has("draft") and pr.flag("draft"),
                      reviewers=tuple(n for role, _, n in people if role == "REVIEWER" and n),
                      approved_by=tuple(n for _, ok, n in people if ok and n), labels=())

    async def approve(self, key: MRKey) -> None:
        await self._verdict("POST", "approve", key)

    async def unapprove(self, key: MRKey) -> None:
        await self._verdict("DELETE", "approve", key)

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        await self._verdict("POST", "request-changes", key)
        return await self.comment(key, body) if body else None

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        me = await self.whoami()
        return own_general_comments(await self.fetch_mr(key.repo, key.iid), me)


def _name(user: JsonObject | None) -> str:
    """An account's nickname (a user) or display name (an app user, a team)."""
    if user is None:
        return ""
    return user.text_or("nickname") or user.text_or("display_name")
