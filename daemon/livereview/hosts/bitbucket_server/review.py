"""Bitbucket Data Center: reviews — changed files, the diff one file at a time, inline
findings, the summary, approve / needs work.

Docs (https://developer.atlassian.com/server/bitbucket/rest/v906/api-group-pull-requests/):
`GET …/pull-requests/{id}/changes` (paged RestChange: path.toString, srcPath for a move,
type ADD | MODIFY | DELETE | MOVE | COPY), `GET …/pull-requests/{id}/diff/{path}` (RestDiff:
diffs[].binary, hunks[].segments[] of ADDED | REMOVED | CONTEXT lines), `PUT
…/participants/{userSlug}` {status: APPROVED | NEEDS_WORK | UNAPPROVED} (the author may not
review: 400 InvalidPullRequestReviewerException).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import structlog

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
from livereview.hosts.base import AuthFailed, HostError, Transient
from livereview.hosts.bitbucket_server import payloads
from livereview.hosts.diffs import (
    EVERY_FILE,
    PathFilter,
    anchor_of,
    own_general_comments,
    too_large,
)
from livereview.hosts.payload import JsonObject

if TYPE_CHECKING:
    from livereview.hosts.http import HttpClient

log = structlog.get_logger("livereview.bitbucket_server")
_STATUS = {"ADD": FileStatus.ADDED, "DELETE": FileStatus.REMOVED, "MOVE": FileStatus.RENAMED}
_PREFIX = {"ADDED": "+", "REMOVED": "-", "CONTEXT": " "}
_VERDICT = {"approve": "APPROVED", "unapprove": "UNAPPROVED", "request_changes": "NEEDS_WORK"}


def change(c: JsonObject) -> FileChange:
    """A /changes row (no line counts there: those come from the file's diff)."""
    new = c.obj("path").text("toString")
    src = c.obj_or_none("srcPath")
    return FileChange(new_path=new, old_path=src.text("toString") if src else new,
                      status=_STATUS.get(c.text_or("type"), FileStatus.MODIFIED),
                      additions=0, deletions=0)


def _range(hunk: JsonObject, side: str) -> str:
    """`start,span` as git writes it (a span of 1 is left out)."""
    start, span = hunk.number(f"{side}Line"), hunk.number(f"{side}Span")
    return str(start) if span == 1 else f"{start},{span}"


def unified(diff: JsonObject) -> tuple[str, int, int]:
    """One RestDiff entry as hunks-only unified text, with its added and removed lines."""
    out, additions, deletions = [], 0, 0
    for hunk in diff.objects("hunks"):
        out.append(f"@@ -{_range(hunk, 'source')} +{_range(hunk, 'destination')} @@")
        for segment in hunk.objects("segments"):
            kind = segment.text("type")
            if kind not in _PREFIX:
                raise segment.error("type", f"unknown segment type {kind[:20]!r}")
            lines = segment.objects("lines")
            additions += len(lines) if kind == "ADDED" else 0
            deletions += len(lines) if kind == "REMOVED" else 0
            out += [_PREFIX[kind] + line.text_or("line") for line in lines]
    return "".join(f"{line}\n" for line in out), additions, deletions


class BitbucketServerReview:
    """The Host protocol's review operations on Bitbucket Data Center (mixed into the adapter)."""

    if TYPE_CHECKING:
        http: HttpClient
        _me: Identity | None
        _slug: str

        def _pull(self, key: MRKey) -> str: ...

        def _pages(self, path: str, params: Mapping[str, Any] | None = None
                   ) -> AsyncGenerator[list[JsonObject], None]: ...

        async def whoami(self) -> Identity: ...

        async def fetch_mr(self, repo: str, iid: int,
                           reactions_for: frozenset[str] = frozenset()) -> Snapshot: ...

        async def comment(self, key: MRKey, body: str,
                          anchor: Anchor | None = None) -> Message: ...

    async def _file(self, key: MRKey, row: FileChange, max_file_bytes: int) -> FileDiff:
        path = row.old_path if row.status is FileStatus.REMOVED else row.new_path
        params: dict[str, Any] = {"contextLines": 3, "withComments": "false"}
        if row.old_path != row.new_path:
            params["srcPath"] = row.old_path
        endpoint = f"{self._pull(key)}/diff/{quote(path)}"
        body = await self.http.one("GET", endpoint, params=params)
        diffs = body.objects("diffs")
        if any(d.flag("binary") for d in diffs):
            return FileDiff(FileChange(row.new_path, row.old_path, row.status, 0, 0, True),
                            "", "binary")
        text, additions, deletions = "", 0, 0
        for d in diffs:
            part, plus, minus = unified(d)
            text, additions, deletions = text + part, additions + plus, deletions + minus
        counted = FileChange(row.new_path, row.old_path, row.status, additions, deletions)
        if any(d.flag("truncated") for d in diffs) or body.flag("truncated"):
            return FileDiff(counted, "", "too large for Bitbucket to show")
        if len(text.encode()) > max_file_bytes:
            return FileDiff(counted, "", too_large(len(text.encode())))
        return FileDiff(counted, text)

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                         paths: PathFilter = EVERY_FILE) -> AsyncGenerator[FileDiff, None]:
        """A page of /changes, then the diff of each file wanted: memory holds one page and
        one file. /changes takes no path: its pages are read until every plain path
        wanted is met, and only those files' diffs are asked for."""
        seen: set[str] = set()
        async with aclosing(self._pages(f"{self._pull(key)}/changes")) as pages:
            async for page in pages:
                for c in page:
                    row = change(c)
                    if paths.wants(row):
                        paths.met(seen, row)
                        yield await self._file(key, row, max_file_bytes)
                if paths.done(seen):
                    return

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        """Data Center's /changes has no line counts: they are read from each file's diff
        (one request per file wanted; a review reads those diffs anyway)."""
        return [f.change async for f in self.diff_files(key, 2**62, paths)]

    async def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                             ) -> AsyncIterator[list[FileChange]]:
        """A row at a time: each costs its file's diff (a request), so each is shown when
        it has its counts."""
        async with aclosing(self.diff_files(key, 2**62, paths)) as files:
            async for f in files:
                yield [f.change]

    async def _own_pull(self, key: MRKey) -> bool:
        me = self._me or await self.whoami()
        pr = payloads.merge_request(key, await self.http.one("GET", self._pull(key)))
        return pr.author.id == me.user_id or pr.author.username == me.username

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        """Each finding an anchored comment, the summary a general one, then the bot's
        participant status. Data Center refuses the author as a reviewer (400): on the
        bot's own PR the verdict stays in the summary."""
        posted = [await self.comment(key, c.body, anchor_of(refs, c)) for c in comments]
        summary = await self.comment(key, body)
        applied = verdict
        try:
            if verdict is Verdict.APPROVED:
                await self.approve(key)
            elif verdict is Verdict.CHANGES_REQUESTED:
                await self._participant_status(key, _VERDICT["request_changes"])
        except (Transient, AuthFailed):
            raise
        except HostError:
            if not await self._own_pull(key):
                raise
            log.info("own_pull_request", mr=str(key), verdict=verdict.value)
            applied = Verdict.COMMENTED
        return PostedReview(summary.id, summary, tuple(posted), applied)

    async def _participant_status(self, key: MRKey, status: str) -> None:
        """The bot's review status on the PR (`PUT participants/{slug}`); setting the same
        status again is allowed."""
        if not self._slug:
            await self.whoami()
        await self.http.request(
            "PUT", f"{self._pull(key)}/participants/{quote(self._slug, safe='')}",
            json={"status": status})

    async def people(self, key: MRKey) -> People:
        """The pull request's `draft` (8.18 on), `reviewers` and who of them and the
        `participants` approved (`approved`), user names as `user.name` (RestPullRequest,
        …/api-group-pull-requests/#api-api-latest-projects-projectkey-repos-repositoryslug-
        pull-requests-pullrequestid-get). Data Center pull requests have no labels."""
        pr = await self.http.one("GET", self._pull(key))
        reviewers = pr.objects("reviewers")
        everyone = [*reviewers, *pr.objects("participants")]
        return People(
            draft=pr.has("draft") and pr.flag("draft"),
            reviewers=tuple(r.obj("user").text("name") for r in reviewers),
            approved_by=tuple(p.obj("user").text("name") for p in everyone
                              if p.has("approved") and p.flag("approved")),
            labels=())

    async def approve(self, key: MRKey) -> None:
        await self._participant_status(key, _VERDICT["approve"])

    async def unapprove(self, key: MRKey) -> None:
        await self._participant_status(key, _VERDICT["unapprove"])

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        """"Needs work" (shown as "Requested changes" from 8.10 on), then why."""
        await self._participant_status(key, _VERDICT["request_changes"])
        return await self.comment(key, body) if body else None

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        me = self._me or await self.whoami()
        return own_general_comments(await self.fetch_mr(key.repo, key.iid), me)
