"""GitLab: reviews — diffstat, the diff one file at a time, inline findings, summary, verdicts.

Docs: https://docs.gitlab.com/api/merge_requests/#list-merge-request-diffs (the entry is
lib/api/entities/diff.rb: diff, collapsed, too_large, new/old_path, a/b_mode, new_file,
renamed_file, deleted_file, generated_file), https://docs.gitlab.com/api/discussions/
#create-a-new-thread-in-the-merge-request-diff, https://docs.gitlab.com/api/
merge_request_approvals/#approve-merge-request (approving twice answers 401:
https://gitlab.com/gitlab-org/gitlab/-/issues/526532; unapproving without an approval 404).

The summary and the notice are notes, not threads: GitLab makes every thread opened with
POST …/discussions resolvable (a DiscussionNote, or a DiffNote with a position), and a
project with "All threads must be resolved" (`only_allow_merge_if_all_discussions_are_
resolved`) cannot merge until someone resolves it. POST …/notes makes an individual note,
which is never resolvable (gitlabhq: app/models/individual_note_discussion.rb), and can be
replied to: the reply turns it into a thread with the same discussion id
(https://docs.gitlab.com/api/discussions/#add-note-to-existing-merge-request-thread).
Findings stay resolvable DiffNotes: they are questions for the author.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

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
from livereview.core.sanitize import inert_commands
from livereview.hosts.base import AuthFailed, Forbidden, NotFound
from livereview.hosts.diffs import EVERY_FILE, PathFilter, count_lines, looks_binary, too_large
from livereview.hosts.gitlab import payloads
from livereview.hosts.payload import JsonObject, json_objects
from livereview.log_setup import get_logger

if TYPE_CHECKING:
    from livereview.hosts.http import HttpClient

log = get_logger("livereview.gitlab")
# Files per page of /diffs: memory holds one page, and GitLab collapses (empties) every
# file diff past its own per-file limit, so a page stays a few MB at worst.
DIFF_PAGE = 20


def _mr(key: MRKey) -> str:
    return f"/api/v4/projects/{quote(key.repo, safe='')}/merge_requests/{key.iid}"


def change(entry: JsonObject) -> FileChange:
    """One /diffs entry's diffstat row (GitLab sends no counts: they come from the hunks)."""
    status = (FileStatus.ADDED if entry.flag("new_file") else FileStatus.REMOVED
              if entry.flag("deleted_file") else FileStatus.RENAMED
              if entry.flag("renamed_file") else FileStatus.MODIFIED)
    diff = entry.text_or("diff")
    additions, deletions = count_lines(diff)
    return FileChange(new_path=entry.text("new_path"), old_path=entry.text("old_path"),
                      status=status, additions=additions, deletions=deletions,
                      binary=looks_binary(diff))


def file_diff(entry: JsonObject, max_file_bytes: int) -> FileDiff:
    row, diff = change(entry), entry.text_or("diff")
    if row.binary:
        return FileDiff(row, "", "binary")
    if entry.flag("too_large"):
        return FileDiff(row, "", "too large for GitLab to show")
    if entry.flag("collapsed") and not diff:
        return FileDiff(row, "", "collapsed by GitLab (over its diff limits)")
    if entry.flag("generated_file"):
        return FileDiff(row, "", "generated")
    if len(diff.encode()) > max_file_bytes:
        return FileDiff(row, "", too_large(len(diff.encode())))
    return FileDiff(row, diff)


def position(refs: DiffRefs, comment: InlineComment) -> dict[str, Any]:
    """A DiffNote position: a removed line has only old_line, an added line only new_line,
    a context line both (GitLab refuses a position whose line pair is not in the diff)."""
    old_line = comment.line if comment.side is Side.OLD else comment.old_line
    new_line = comment.line if comment.side is Side.NEW else None
    return {"position_type": "text", "base_sha": refs.base_sha, "start_sha": refs.start_sha,
            "head_sha": refs.head_sha, "new_path": comment.path,
            "old_path": comment.old_path or comment.path,
            "new_line": new_line, "old_line": old_line}


class GitLabReview:
    """The Host protocol's review operations on GitLab (mixed into the adapter)."""

    if TYPE_CHECKING:
        http: HttpClient
        _me: Identity | None

        async def whoami(self) -> Identity: ...

    async def _pages(self, key: MRKey) -> AsyncGenerator[list[JsonObject], None]:
        path = f"{_mr(key)}/diffs"
        async with aclosing(self.http.pages(path, per_page=DIFF_PAGE)) as pages:
            async for page in pages:
                yield json_objects(page, f"GET {path}")

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        return [row async for page in self.diffstat_pages(key, paths) for row in page]

    async def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                             ) -> AsyncIterator[list[FileChange]]:
        """One page of /diffs at a time (its rows' counts come from its hunks)."""
        seen: set[str] = set()
        async with aclosing(self._pages(key)) as pages:
            async for page in pages:
                rows = [row for row in (change(entry) for entry in page) if paths.wants(row)]
                for row in rows:
                    paths.met(seen, row)
                yield rows
                if paths.done(seen):
                    return

    async def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                         paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        """/diffs takes no path: pages are read until every plain path wanted is met."""
        seen: set[str] = set()
        async with aclosing(self._pages(key)) as pages:
            async for page in pages:
                for entry in page:
                    item = file_diff(entry, max_file_bytes)
                    if paths.wants(item.change):
                        paths.met(seen, item.change)
                        yield item
                if paths.done(seen):
                    return

    async def note(self, key: MRKey, body: str) -> Message:
        """A general note that asks nothing of anyone (a review's summary, a notice): not
        resolvable, so it never holds up a merge. GitLab's note entity carries no
        discussion id, so the message's thread id is empty; the MR's discussions list the
        note as an individual discussion, where polling and adoption find it."""
        posted = await self.http.one("POST", f"{_mr(key)}/notes",
                                     json={"body": inert_commands(body)})
        return payloads.message(posted, "")

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        """One discussion per finding, then the summary note, then the approval: GitLab
        has no batch, and never an approval when changes are requested."""
        posted = []
        for c in comments:
            discussion = await self.http.one("POST", f"{_mr(key)}/discussions",
                                             json={"body": inert_commands(c.body),
                                                   "position": position(refs, c)})
            root = payloads.thread(discussion).root
            if root is None:
                raise discussion.error("notes", "empty")
            posted.append(root)
        summary = await self.note(key, body)
        applied = verdict
        if verdict is Verdict.APPROVED:
            try:
                await self.approve(key)
            except Forbidden as exc:  # the bot may not approve here (its own MR, a rule)
                log.warning("approve_refused", mr=str(key), reason=str(exc))
                applied = Verdict.COMMENTED
        elif verdict is Verdict.CHANGES_REQUESTED:
            await self.unapprove(key)
        return PostedReview(summary.id, summary, tuple(posted), applied)

    async def people(self, key: MRKey) -> People:
        """The MR's `draft`, `reviewers` and `labels` (https://docs.gitlab.com/api/
        merge_requests/#get-single-mr) and its approvals' `approved_by`."""
        data = await self.http.one("GET", _mr(key))
        approvals = await self.http.one("GET", f"{_mr(key)}/approvals")
        return People(
            draft=data.has("draft") and data.flag("draft"),
            reviewers=tuple(r.text("username") for r in data.objects("reviewers")),
            approved_by=tuple(a.obj("user").text("username")
                              for a in approvals.objects("approved_by")),
            labels=data.texts("labels"))

    async def _approved_by_me(self, key: MRKey) -> bool:
        me = self._me or await self.whoami()
        approvals = await self.http.one("GET", f"{_mr(key)}/approvals")
        return any(payloads.actor(a.obj_or_none("user")).id == me.user_id
                   for a in approvals.objects("approved_by"))

    async def approve(self, key: MRKey) -> None:
        try:
            await self.http.request("POST", f"{_mr(key)}/approve")
        except AuthFailed:
            # GitLab answers 401 both to a second approval and to a user who may not
            # approve: the first is success, the second a refusal, not a bad token.
            if not await self._approved_by_me(key):
                raise Forbidden(f"POST {_mr(key)}/approve: HTTP 401 (may not approve)"
                                ) from None

    async def unapprove(self, key: MRKey) -> None:
        try:
            await self.http.request("POST", f"{_mr(key)}/unapprove")
        except NotFound:  # not approved by the bot: already so
            return

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        """GitLab's REST API has no "request changes": withdraw the approval and say why."""
        await self.unapprove(key)
        return await self.note(key, body) if body else None

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        me = self._me or await self.whoami()
        found = []
        async for page in self.http.items(f"{_mr(key)}/discussions"):
            for discussion in page:
                thread = payloads.thread(discussion)
                found += [m for m in thread.messages[:1]
                          if thread.anchor is None and not m.system and m.author.id == me.user_id]
        return found
