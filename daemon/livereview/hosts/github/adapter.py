"""GitHub.com and GitHub Enterprise Server (REST, API version 2022-11-28) ⇄ the review model.

Only the modules of this package know GitHub's JSON. A pull request's conversation maps to
threads like this (ids are GitHub's own URL fragments):

- an issue comment (the "Conversation" tab) is a lone general thread `issuecomment-<id>`;
  GitHub has no replies there, so a reply is a new issue comment quoting the question;
- review comments are threads keyed by their first comment, `discussion_r<root id>`
  (replies carry `in_reply_to_id`), anchored at path/line/side and a commit;
- a review's non-empty body is a lone general thread `pullrequestreview-<id>`.

This module reads a pull request and writes comments; its parts live beside it: the
active tier's looks (looks.py), listing changed pull requests (listing.py), reactions
(reactions.py), threads' resolution (resolution.py), reviews (review.py), the search and
notifications (poll.py), the JSON (payloads.py) and the REST paths (rest.py).

Docs: https://docs.github.com/en/rest/pulls, …/rest/issues/comments, …/rest/reactions.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

import structlog

from livereview.core import sanitize
from livereview.core.model import (
    Anchor,
    ChangedMR,
    Identity,
    Message,
    MRKey,
    Snapshot,
    Thread,
)
from livereview.hosts.base import (
    Capabilities,
    NotFound,
    OverHttp,
)
from livereview.hosts.github.graphql import GraphQL
from livereview.hosts.github.listing import Listing
from livereview.hosts.github.looks import Looks
from livereview.hosts.github.payloads import (
    ISSUE,
    REVIEW,
    conversation,
    issue_message,
    issue_thread,
    merge_request,
    parse_id,
    review_body_thread,
    review_comment_place,
    review_message,
    review_threads,
    to_commit,
    unified_diff,
)
from livereview.hosts.github.poll import Notifications
from livereview.hosts.github.reactions import Reactions, unreacted_ids
from livereview.hosts.github.resolution import Resolutions
from livereview.hosts.github.rest import every_item, pull_path, repo_path
from livereview.hosts.github.review import GitHubReview
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject, json_objects

log = structlog.get_logger("livereview.github")


@dataclass(frozen=True)
class _PullRead:
    """What reading a pull request fetched (`GitHub._read_pull`)."""

    pr: JsonObject
    issue_comments: list[JsonObject]
    review_comments: list[JsonObject]
    reviews: list[JsonObject]
    commits: list[JsonObject]


class GitHub(GitHubReview, OverHttp):
    type = "github"
    # Changes of every watched repo come from one batched GraphQL search per cycle, and
    # mentions from the notifications inbox when X-Poll-Interval allows (poll.py);
    # first sight lists each repo's open PRs.
    capabilities = Capabilities(reactions=True, resolve=True, threaded_general_comments=False,
                                instance_wide_listing=True, mention_inbox=True,
                                review_batch=True)

    def __init__(self, name: str, http: HttpClient, *, graphql_url: str) -> None:
        self.name = name
        self.http = http
        self.graphql = GraphQL(http, graphql_url)
        self.notifications = Notifications(http, name)
        self.listing = Listing(http, self.graphql, name)
        self.looks = Looks(http)
        self.reactions = Reactions(http, self.graphql)
        self.resolutions = Resolutions(self.graphql, name)

    @property
    def listing_is_cheap(self) -> bool:
        return not self.listing.search_off

    def inbox_due(self) -> bool:
        """Whether this cycle reads the notifications (instead of searching)."""
        return self.notifications.due()

    async def whoami(self) -> Identity:
        user = await self.http.one("GET", "/user")
        return Identity(self.name, str(user.number("id")), user.text("login"))

    async def repo_exists(self, repo: str) -> bool:
        try:
            await self.http.request("GET", repo_path(repo), conditional=True)
        except NotFound:  # GitHub answers 404, not 403, for a repo the token cannot see
            return False
        return True

    async def mr_changed(self, key: MRKey) -> bool:
        """One conditional `GET` of the pull request (`Looks.changed` says why on which
        ETag)."""
        return await self.looks.changed(key)

    def forget_look(self, key: MRKey) -> None:
        self.looks.forget(key)

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        return await self.notifications.read(repos)

    async def clear_mentions(self, item_ids: list[str]) -> None:
        await self.notifications.mark_read(item_ids)

    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]:
        """Open PRs of `repos` updated at or after `since` (all when None): listing.py."""
        return await self.listing.changed_mrs(repos, since)

    # ---- reading a PR -----------------------------------------------------------------------
    async def _read_pull(self, key: MRKey) -> _PullRead:
        """The pull request, and its issue comments, review comments, reviews and commits.
        Hot PRs are re-fetched every few seconds: each list is revalidated by its ETag.
        The five reads at once (the client bounds what is in flight): one after the other
        they were ~5 × the host's latency of every hot PR's time to 👀 (bench 2d). The
        first to fail stops the others and is raised as itself."""
        base = pull_path(key)
        try:
            async with asyncio.TaskGroup() as group:
                pr_read = group.create_task(self.http.one("GET", base, conditional=True))
                reads = [group.create_task(every_item(self.http, path)) for path in (
                    f"{repo_path(key.repo)}/issues/{key.iid}/comments", f"{base}/comments",
                    f"{base}/reviews", f"{base}/commits")]
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None
        issue_comments, review_comments, reviews, commits = (read.result() for read in reads)
        return _PullRead(pr_read.result(), issue_comments, review_comments, reviews, commits)

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        key = MRKey(self.name, repo, iid)
        read = await self._read_pull(key)
        self.reactions.learn(read.reviews)
        roots = {c.number("id") for c in read.review_comments if not c.has("in_reply_to_id")}
        states = await self.resolutions.states(key, roots)
        threads = conversation(read.issue_comments, read.review_comments, read.reviews, states)
        if reactions_for:
            unreacted = unreacted_ids(read.issue_comments, read.review_comments)
            threads = [await self.reactions.read(key, t, reactions_for - unreacted)
                       for t in threads]
        return Snapshot(mr=merge_request(key, read.pr), threads=tuple(threads),
                        commits=tuple(to_commit(c) for c in reversed(read.commits)))

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        """One thread as it is now. For a general thread (no replies on GitHub) it holds
        the question and every later issue comment, so a reply posted as a new comment is
        found there (adoption after a crash)."""
        kind, number = parse_id(thread_id)
        if kind == REVIEW:
            comments = await every_item(self.http, f"{pull_path(key)}/comments")
            found = [t for t in review_threads(comments, {}) if t.id == thread_id]
            if not found:
                raise NotFound(f"review thread {thread_id} not in {key}")
            return found[0]
        comments = await every_item(
            self.http, f"{repo_path(key.repo)}/issues/{key.iid}/comments")
        messages = [(c.number("id"), issue_message(c, thread_id)) for c in comments]
        if kind == ISSUE:
            question = next((c for c in comments if c.number("id") == number), None)
            if question is None:
                raise NotFound(f"comment {thread_id} not in {key}")
            start = question.time("created_at")
            return issue_thread(question, tuple(
                m for cid, m in messages if cid != number and m.created_at >= start))
        review = await self.http.one("GET", f"{pull_path(key)}/reviews/{number}")
        start = review.time("submitted_at")
        return review_body_thread(review, tuple(
            m for _, m in messages if m.created_at >= start))

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The PR's changes as one unified diff: the current version, or the version whose
        head was `head_sha` (three-dot compare from the base: what the PR showed then)."""
        if head_sha:
            pr = merge_request(key, await self.http.one("GET", pull_path(key), conditional=True))
            if head_sha != pr.head_sha:
                try:
                    compare = await self.http.one(
                        "GET", f"{repo_path(key.repo)}/compare/{pr.base_sha}...{head_sha}")
                    return unified_diff(compare.objects("files"))
                except NotFound:  # the old head is gone (garbage-collected): use the current
                    log.info("diff_version_gone", host=self.name, mr=str(key), head=head_sha)
        return unified_diff(await every_item(self.http, f"{pull_path(key)}/files"))

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        response = await self.http.request(
            "GET", f"{repo_path(repo)}/contents/{quote(path)}", params={"ref": ref},
            headers={"Accept": "application/vnd.github.raw+json"})
        return response.text

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        path = f"{repo_path(repo)}/contents/{quote(directory.strip('/'))}"
        entries = await self.http.json("GET", path, params={"ref": ref})
        if not isinstance(entries, list):  # a file, not a directory
            return []
        return [e.text("path") for e in json_objects(entries, f"GET {path}")
                if e.text_or("type") == "file"]

    # ---- writing ----------------------------------------------------------------------------
    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        """In a review thread: a reply to its first comment (GitHub takes no reply to a
        reply). Elsewhere: a new PR comment that quotes the question."""
        kind, number = parse_id(thread_id)
        if kind == REVIEW:
            c = await self.http.one(
                "POST", f"{pull_path(key)}/comments/{number}/replies", json={"body": body})
            return review_message(c, thread_id)
        if kind == ISSUE:
            question = await self.http.one(
                "GET", f"{repo_path(key.repo)}/issues/comments/{number}")
        else:
            question = await self.http.one("GET", f"{pull_path(key)}/reviews/{number}")
        quoted = sanitize.quote(question.text_or("body"))
        return await self.comment(key, f"{quoted}\n\n{body}" if quoted else body)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        if anchor is None:
            c = await self.http.one(
                "POST", f"{repo_path(key.repo)}/issues/{key.iid}/comments", json={"body": body})
            return issue_message(c)
        c = await self.http.one("POST", f"{pull_path(key)}/comments",
                                json={"body": body, **review_comment_place(anchor)})
        return review_message(c)

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        """A reaction (reactions.py); GitHub answers 200 instead of 201 when it exists
        already: success."""
        await self.reactions.add(key, message_id, emoji)

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        await self.resolutions.resolve(key, thread_id, resolved)
