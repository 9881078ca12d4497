"""GitHub: reviews — diffstat, the diff one file at a time, one review per post, verdicts.

Docs: https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files (at most 3 000
files; `patch` is absent for a binary or a too large file), https://docs.github.com/en/rest/
pulls/reviews#create-a-review-for-a-pull-request (`event` APPROVE | REQUEST_CHANGES |
COMMENT, `comments` an array of {path, line, side, body}; 422 "Can not approve your own
pull request"), …#dismiss-a-review-for-a-pull-request, …#list-comments-for-a-pull-request-review.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import structlog

from livereview.core.model import (
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
    Side,
    Verdict,
)
from livereview.hosts.base import Conflict
from livereview.hosts.diffs import EVERY_FILE, PathFilter, too_large
from livereview.hosts.github.payloads import (
    REVIEW_BODY,
    actor,
    merge_request,
    review_message,
    to_message,
)
from livereview.hosts.github.rest import pull_path
from livereview.hosts.payload import JsonObject

if TYPE_CHECKING:
    from livereview.hosts.http import HttpClient

log = structlog.get_logger("livereview.github")
_STATUS = {"added": FileStatus.ADDED, "removed": FileStatus.REMOVED,
           "renamed": FileStatus.RENAMED}  # modified, changed, copied, unchanged: modified
_EVENT = {Verdict.APPROVED: "APPROVE", Verdict.CHANGES_REQUESTED: "REQUEST_CHANGES",
          Verdict.COMMENTED: "COMMENT"}
_APPLIED = {"APPROVED": Verdict.APPROVED, "CHANGES_REQUESTED": Verdict.CHANGES_REQUESTED}


def change(f: JsonObject) -> FileChange:
    new = f.text("filename")
    additions, deletions = f.number("additions"), f.number("deletions")
    return FileChange(new_path=new, old_path=f.text_or("previous_filename") or new,
                      status=_STATUS.get(f.text_or("status"), FileStatus.MODIFIED),
                      additions=additions, deletions=deletions,
                      # no patch and no line counted: git could not diff it as text
                      binary=not f.has("patch") and additions + deletions == 0
                      and f.text_or("status") != "renamed")


def file_diff(f: JsonObject, max_file_bytes: int) -> FileDiff:
    row, patch = change(f), f.text_or("patch")
    if row.binary:
        return FileDiff(row, "", "binary")
    if not patch and row.additions + row.deletions:
        return FileDiff(row, "", "too large for GitHub to show")
    if len(patch.encode()) > max_file_bytes:
        return FileDiff(row, "", too_large(len(patch.encode())))
    return FileDiff(row, patch)


def review_comment(c: InlineComment) -> dict[str, Any]:
    return {"path": c.path, "line": c.line, "side": "LEFT" if c.side is Side.OLD else "RIGHT",
            "body": c.body}


def summary_message(review: JsonObject) -> Message:
    tid = f"{REVIEW_BODY}{review.number('id')}"
    return to_message(tid, tid, review, "submitted_at")


def verdict_line(verdict: Verdict) -> str:
    words = verdict.value.replace("_", " ")
    return (f"**Verdict: {words}** (GitHub does not let an account approve or request "
            "changes on its own pull request, so this is a comment.)")


class GitHubReview:
    """The Host protocol's review operations on GitHub (mixed into the adapter)."""

    if TYPE_CHECKING:
        http: HttpClient

        async def whoami(self) -> Identity: ...

    async def _file_pages(self, key: MRKey, paths: PathFilter
                          ) -> AsyncGenerator[list[tuple[FileChange, JsonObject]], None]:
        """/pulls/{n}/files takes no path: pages are read until every plain path wanted
        is met (100 files a page, each patch already truncated by GitHub)."""
        seen: set[str] = set()
        async with aclosing(self.http.items(f"{pull_path(key)}/files")) as pages:
            async for page in pages:
                rows = [(row, f) for row, f in ((change(f), f) for f in page)
                        if paths.wants(row)]
                for row, _ in rows:
                    paths.met(seen, row)
                yield rows
                if paths.done(seen):
                    return

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        return [row async for page in self.diffstat_pages(key, paths) for row in page]

    async def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                             ) -> AsyncIterator[list[FileChange]]:
        async with aclosing(self._file_pages(key, paths)) as pages:
            async for page in pages:
                yield [row for row, _ in page]

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                         paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        async with aclosing(self._file_pages(key, paths)) as pages:
            async for page in pages:
                for _, f in page:
                    yield file_diff(f, max_file_bytes)

    async def _review(self, key: MRKey, event: str, body: str,
                      comments: Sequence[InlineComment] = (), commit: str = "") -> JsonObject:
        payload: dict[str, Any] = {"event": event, "body": body,
                                   "comments": [review_comment(c) for c in comments]}
        if commit:
            payload["commit_id"] = commit
        return await self.http.one("POST", f"{pull_path(key)}/reviews", json=payload)

    async def _own_pull(self, key: MRKey) -> bool:
        me = await self.whoami()
        pr = merge_request(key, await self.http.one("GET", pull_path(key)))
        return pr.author.id == me.user_id

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        """One request: the findings, the summary and the verdict as one review. GitHub
        refuses (422) to approve or request changes on its account's own PR: then a
        COMMENT review carries the verdict in its body."""
        event, applied = _EVENT[verdict], verdict
        try:
            review = await self._review(key, event, body, comments, refs.head_sha)
        except Conflict:
            if verdict is Verdict.COMMENTED or not await self._own_pull(key):
                raise
            log.info("own_pull_request", mr=str(key), verdict=verdict.value)
            applied = Verdict.COMMENTED
            review = await self._review(key, "COMMENT", f"{verdict_line(verdict)}\n\n{body}",
                                        comments, refs.head_sha)
        review_id = review.token("id")
        posted: list[Message] = []
        if comments:
            # The create response holds no comments: this review's own, by its id.
            path = f"{pull_path(key)}/reviews/{review_id}/comments"
            mine = [review_message(c) async for page in self.http.items(path) for c in page]
            posted = _in_order(mine, comments)
        state = review.text_or("state")
        if state in _APPLIED and _APPLIED[state] is not applied:
            applied = _APPLIED[state]
        return PostedReview(review_id, summary_message(review), tuple(posted), applied)

    async def people(self, key: MRKey) -> People:
        """The pull's `draft`, `requested_reviewers` and `labels` (…/pulls/pulls#get-a-pull-
        request); approved by whoever's latest APPROVED / CHANGES_REQUESTED / DISMISSED review
        is an approval (…/pulls/reviews#list-reviews-for-a-pull-request, oldest first)."""
        pull = await self.http.one("GET", pull_path(key))
        standing: dict[str, str] = {}
        async for page in self.http.items(f"{pull_path(key)}/reviews"):
            for r in page:
                if r.text_or("state") in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
                    user = r.obj_or_none("user")
                    standing[user.text_or("login") if user else ""] = r.text("state")
        return People(
            draft=pull.has("draft") and pull.flag("draft"),
            reviewers=tuple(u.text("login") for u in pull.objects("requested_reviewers")),
            approved_by=tuple(u for u, s in standing.items() if u and s == "APPROVED"),
            labels=tuple(label.text("name") for label in pull.objects("labels")))

    async def approve(self, key: MRKey) -> None:
        await self._review(key, "APPROVE", "")

    async def unapprove(self, key: MRKey) -> None:
        """Dismiss the bot's standing approvals (a dismissal needs a message)."""
        me = await self.whoami()
        async for page in self.http.items(f"{pull_path(key)}/reviews"):
            for r in page:
                if r.text_or("state") == "APPROVED" and actor(r.obj_or_none("user")).id == \
                        me.user_id:
                    await self.http.request(
                        "PUT", f"{pull_path(key)}/reviews/{r.token('id')}/dismissals",
                        json={"message": "Approval withdrawn by the reviewer bot.",
                              "event": "DISMISS"})

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        review = await self._review(key, "REQUEST_CHANGES", body or "Changes requested.")
        return summary_message(review) if body else None

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        me = await self.whoami()
        return [summary_message(r) async for page in self.http.items(
            f"{pull_path(key)}/reviews") for r in page
            if actor(r.obj_or_none("user")).id == me.user_id and r.text_or("body")]


def _in_order(posted: list[Message], wanted: Sequence[InlineComment]) -> list[Message]:
    """The review's comments in the order they were asked for (by body, then as listed)."""
    left = list(posted)
    ordered = []
    for c in wanted:
        match = next((m for m in left if m.body == c.body), None)
        if match is None:
            raise Conflict(f"review comment {c.path}:{c.line} missing from the posted review")
        left.remove(match)
        ordered.append(match)
    return ordered
