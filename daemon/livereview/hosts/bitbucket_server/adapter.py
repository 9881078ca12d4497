"""Bitbucket Data Center / Server (REST 1.0) ⇄ the review model.

Only this module and payloads.py know Bitbucket's JSON. The configured
`url` is the server's base (https://HOST or https://HOST/CONTEXT); requests go to
`/rest/api/1.0/…`, and reactions to the comment-likes plugin's `/rest/comment-likes/latest/…`.
A repo is `PROJECT_KEY/repo-slug`. Lists are pages of `values` with `isLastPage` and
`nextPageStart` in the body, asked for with `start` and `limit`.

Docs: https://developer.atlassian.com/server/bitbucket/rest/v906/api-group-pull-requests/,
…/api-group-repository/, …/api-group-system-maintenance/ (application properties, users),
…/api-group-dashboard/ (the bot's pull requests across repositories),
https://developer.atlassian.com/server/bitbucket/rest/v803/api-group-comment-likes/.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx2
import structlog

from livereview.core.model import Anchor, ChangedMR, Identity, Message, MRKey, Snapshot, Thread
from livereview.hosts.base import (
    AuthFailed,
    BadRequest,
    BadResponse,
    Capabilities,
    Conflict,
    NotFound,
    OverHttp,
    ReactionRefused,
)
from livereview.hosts.bitbucket_server import payloads
from livereview.hosts.bitbucket_server.review import BitbucketServerReview
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject, json_object

log = structlog.get_logger("livereview.bitbucket_server")
API = "/rest/api/1.0"
LIKES = "/rest/comment-likes/latest"
PAGE = 100  # items per page (the server's default is 25)
MAX_PAGES = 10_000  # a server whose pages never end is broken, not busy
# Emoji reactions on comments came with Data Center 7 (the comment-likes plugin's
# `/reactions/{emoticon}`); older servers only have likes. Checked against the server's
# version once, and again when the endpoint answers 404 for a comment that exists.
REACTIONS_SINCE = (7, 0)
_VERSION = re.compile(r"^(\d+)\.(\d+)")


def _decode(response: httpx2.Response, endpoint: str) -> JsonObject:
    try:
        return json_object(response.json(), endpoint)
    except (ValueError, RecursionError):
        raise BadResponse(f"{endpoint}: expected JSON") from None


class BitbucketServer(BitbucketServerReview, OverHttp):
    type = "bitbucket-server"

    def __init__(self, name: str, http: HttpClient) -> None:
        self.name = name
        self.http = http
        # An instance attribute: whether reactions exist depends on the server, found once.
        self.capabilities = Capabilities(reactions=True, resolve=True,
                                         threaded_general_comments=True,
                                         instance_wide_listing=False, mention_inbox=False)
        self.version = ""  # the server's, from application-properties
        self._detected = False
        self._me: Identity | None = None
        self._slug = ""  # the bot's user slug (participant status is set by slug)

    @property
    def listing_is_cheap(self) -> bool:
        return False


    # ---- who and what ----------------------------------------------------------------------
    def _set_reactions(self, available: bool, why: str) -> None:
        if available != self.capabilities.reactions:
            log.info("reactions_capability", host=self.name, available=available, why=why)
        self.capabilities = Capabilities(
            reactions=available, resolve=self.capabilities.resolve,
            threaded_general_comments=True, instance_wide_listing=False, mention_inbox=False)

    async def _properties(self) -> httpx2.Response:
        """`GET application-properties` (version, build). It needs no authentication, so the
        answer also says who the token is: Bitbucket names the authenticated user of every
        response in `X-AUSERNAME` (absent: the request was anonymous)."""
        path = f"{API}/application-properties"
        response = await self.http.request("GET", path)
        props = _decode(response, f"GET {path}")
        self.version = props.text_or("version")
        match = _VERSION.match(self.version)
        known = tuple(int(x) for x in match.groups()) if match else None
        self._set_reactions(known is None or known >= REACTIONS_SINCE,
                            f"server version {self.version or 'unknown'}")
        self._detected = True
        return response

    async def _detect(self) -> None:
        if not self._detected:
            await self._properties()

    async def whoami(self) -> Identity:
        response = await self._properties()
        name = response.headers.get("X-AUSERNAME", "").strip()
        if not name:
            raise AuthFailed("GET application-properties: the server treated the request as "
                             "anonymous (no X-AUSERNAME): the token was not accepted")
        try:
            user = await self.http.one("GET", f"{API}/users/{quote(name.lower(), safe='')}")
        except NotFound:  # a slug that is not the lower-cased name: the header's id serves
            user_id = response.headers.get("X-AUSERID", "").strip()
            self._slug = name
            self._me = Identity(self.name, user_id or name, name)
            return self._me
        self._slug = user.text_or("slug") or name
        self._me = Identity(self.name, str(user.number("id")), user.text_or("name") or name)
        return self._me

    def _repo(self, repo: str, root: str = API) -> str:
        key, _, slug = repo.partition("/")
        if not key or not slug or "/" in slug:
            raise NotFound(f"{repo}: a Bitbucket repository is PROJECT_KEY/repo-slug")
        return f"{root}/projects/{quote(key, safe='')}/repos/{quote(slug, safe='')}"

    def _pull(self, key: MRKey) -> str:
        return f"{self._repo(key.repo)}/pull-requests/{key.iid}"

    async def repo_exists(self, repo: str) -> bool:
        try:
            await self.http.request("GET", self._repo(repo))
        except NotFound:
            return False
        return True

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        return {}

    async def clear_mentions(self, item_ids: list[str]) -> None:
        return None

    # ---- paging ------------------------------------------------------------------------------
    async def _pages(self, path: str, params: Mapping[str, Any] | None = None
                     ) -> AsyncGenerator[list[JsonObject], None]:
        """Every page of a paged list: `values`, until `isLastPage` (or an empty page)."""
        start = 0
        for number in range(1, MAX_PAGES + 1):
            page = await self.http.one("GET", path,
                                       params={**(params or {}), "start": start, "limit": PAGE})
            values = page.objects("values")
            yield values
            if page.flag("isLastPage") or not values:
                return
            following = page.number("nextPageStart")
            if following <= start:
                raise page.error("nextPageStart", f"does not advance (page {number})")
            start = following
        raise BadResponse(f"GET {path}: more than {MAX_PAGES} pages")

    async def _all(self, path: str, params: Mapping[str, Any] | None = None
                   ) -> list[JsonObject]:
        return [item async for page in self._pages(path, params) for item in page]

    # ---- listing -----------------------------------------------------------------------------
    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]:
        """Open PRs of `repos` updated at or after `since` (all when None).

        Bitbucket has no updated-since filter: per repo, the open PRs newest first
        (`order=NEWEST`), read until a page reaches PRs older than `since`. An idle repo
        costs one request. Every comment action (added, replied, edited, deleted) is an
        activity of the PR (PullRequestAction javadoc), taken to move its `updatedDate`: the
        fake does; a live server has not confirmed it yet (docs/bitbucket-data-center.md)."""
        await self._detect()
        found = await asyncio.gather(*(self._changed_in(repo, since) for repo in repos))
        return [mr for listed in found for mr in listed]

    async def _changed_in(self, repo: str, since: datetime | None) -> list[ChangedMR]:
        changed: list[ChangedMR] = []
        pages = self._pages(f"{self._repo(repo)}/pull-requests",
                            {"state": "OPEN", "order": "NEWEST", "withAttributes": "false",
                             "withProperties": "false"})
        async with aclosing(pages):
            async for page in pages:
                listed = [payloads.changed_mr(repo, p) for p in page]
                fresh = [mr for mr in listed if since is None or mr.updated_at >= since]
                changed += fresh
                if len(fresh) < len(listed):  # newest first: the rest is older
                    break
        return changed

    @property
    def involvement_feed(self) -> bool:
        return True

    async def involved_mrs(self, repos: tuple[str, ...], since: datetime | None
                           ) -> list[ChangedMR]:
        """Open PRs of `repos` where the bot is the author, a reviewer or a participant
        (commented or reviewed), updated at or after `since`: one request for every
        repository (`GET dashboard/pull-requests` without `role` lists all three roles,
        `order=NEWEST` the most recently updated first), read until a page reaches PRs older
        than `since`. A mention alone does not make the bot a participant: a PR it never
        took part in is found by its repo's listing."""
        await self._detect()
        wanted = {repo.lower(): repo for repo in repos}  # project keys are case-insensitive
        found: list[ChangedMR] = []
        pages = self._pages(f"{API}/dashboard/pull-requests",
                            {"state": "OPEN", "order": "NEWEST"})
        async with aclosing(pages):
            async for page in pages:
                listed = [(payloads.target_repo(p), p) for p in page]
                fresh = [(repo, p) for repo, p in listed
                         if since is None or payloads.stamp(p, "updatedDate") >= since]
                found += [payloads.changed_mr(wanted[repo.lower()], p) for repo, p in fresh
                          if repo.lower() in wanted]
                if len(fresh) < len(listed):  # newest first: the rest is older
                    break
        return found

    # ---- reading a PR ------------------------------------------------------------------------
    async def _conversation(self, key: MRKey, head: str, reactions_for: frozenset[str]
                            ) -> list[Thread]:
        """Threads from the PR's `COMMENTED` activities (one request per 100 activities)."""
        roots: list[tuple[JsonObject, JsonObject | None]] = []
        deleted: set[str] = set()
        async for page in self._pages(f"{self._pull(key)}/activities"):
            for activity in page:
                if activity.text_or("action") != "COMMENTED" or not activity.has("comment"):
                    continue
                comment = activity.obj("comment")
                if activity.text_or("commentAction") == "DELETED":
                    deleted.add(str(comment.number("id")))
                    continue
                roots.append((comment, activity.obj_or_none("commentAnchor")))
        return payloads.threads(roots, head, reactions_for, frozenset(deleted))

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        key = MRKey(self.name, repo, iid)
        await self._detect()
        mr = payloads.merge_request(key, await self.http.one("GET", self._pull(key)))
        threads = await self._conversation(key, mr.head_sha, reactions_for)
        commits = [payloads.commit(c) for c in await self._all(f"{self._pull(key)}/commits")]
        return Snapshot(mr=mr, threads=tuple(threads), commits=tuple(commits))

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        """One thread as it is now: its root comment carries every reply below it."""
        root = await self.http.one("GET", f"{self._pull(key)}/comments/{_number(thread_id)}")
        found = payloads.threads([(root, None)], "")
        if not found:
            raise NotFound(f"comment {thread_id} not in {key}")
        return found[0]

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The PR's changes as one unified diff: the current version (`{pr}.diff`), or —
        for a thread written on an older head — base…head_sha (`/diff?since&until`)."""
        text = {"Accept": "text/plain"}
        if head_sha:
            pr = payloads.merge_request(key, await self.http.one("GET", self._pull(key)))
            if head_sha != pr.head_sha:
                try:
                    response = await self.http.request(
                        "GET", f"{self._repo(key.repo)}/diff", headers=text,
                        params={"since": pr.base_sha, "until": head_sha, "contextLines": 3})
                    return payloads.unified_diff(response.text)
                except NotFound:  # the old head is gone: the current diff is the best left
                    log.info("diff_version_gone", host=self.name, mr=str(key), head=head_sha)
        response = await self.http.request("GET", f"{self._pull(key)}.diff", headers=text,
                                           params={"contextLines": 3})
        return payloads.unified_diff(response.text)

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        response = await self.http.request(
            "GET", f"{self._repo(repo)}/raw/{quote(path.strip('/'))}", params={"at": ref})
        return response.text

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        """Files directly in `directory` (`browse`: a directory's `children` page)."""
        folder = directory.strip("/")
        path = f"{self._repo(repo)}/browse/{quote(folder)}"
        found: list[str] = []
        start = 0
        for _ in range(MAX_PAGES):
            listing = await self.http.one("GET", path, params={"at": ref, "start": start,
                                                               "limit": PAGE})
            children = listing.obj_or_none("children")
            if children is None:  # a file, not a directory
                return []
            for child in children.objects("values"):
                if child.text_or("type") == "FILE":
                    name = payloads.file_path(child, "path")
                    found.append(f"{folder}/{name}" if folder else name)
            if children.flag("isLastPage") or not children.objects("values"):
                return found
            start = children.number("nextPageStart")
        raise BadResponse(f"GET {path}: more than {MAX_PAGES} pages")

    # ---- writing -----------------------------------------------------------------------------
    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        """A reply to the thread's root comment (Bitbucket nests it there)."""
        c = await self.http.one("POST", f"{self._pull(key)}/comments",
                                json={"text": payloads.outgoing(body),
                                      "parent": {"id": _number(thread_id)}})
        return payloads.message(c, thread_id)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        payload: dict[str, Any] = {"text": payloads.outgoing(body)}
        if anchor is not None:
            payload["anchor"] = payloads.comment_anchor(anchor)
        c = await self.http.one("POST", f"{self._pull(key)}/comments", json=payload)
        return payloads.message(c, str(c.number("id")))  # a new root: its own thread

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        """An emoticon reaction (`PUT`: one per user and emoticon, so a repeat is a no-op)."""
        path = (f"{self._repo(key.repo, LIKES)}/pull-requests/{key.iid}"
                f"/comments/{_number(message_id)}"
                f"/reactions/{quote(emoji, safe='')}")
        try:
            await self.http.request("PUT", path)
        except Conflict:
            return  # "already reacted" on servers that refuse a repeat
        except BadRequest:
            # Not an emoticon of the server's picker (hosts/reactions.py): every comment
            # would be refused alike, so the worker acks by a reply on this host from now on.
            raise ReactionRefused(f"{emoji!r} is not offered by Bitbucket Data Center "
                                  "(HTTP 400)") from None
        except NotFound:
            # The plugin's endpoint is missing (an older or trimmed server), or the comment
            # is gone: only the first means "no reactions here" — ack by a reply from now on.
            await self.http.request("GET", f"{self._pull(key)}/comments/{_number(message_id)}")
            self._set_reactions(False, "the reactions endpoint answered 404")
            raise

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        """`threadResolved` on the root comment (a PUT needs its current `version`)."""
        path = f"{self._pull(key)}/comments/{_number(thread_id)}"
        for attempt in range(2):
            root = await self.http.one("GET", path)
            if not root.has("threadResolved"):
                raise Conflict(f"{thread_id}: this server cannot resolve comment threads")
            try:
                await self.http.request("PUT", path, json={
                    "version": root.number("version"), "threadResolved": resolved})
                return
            except Conflict:  # edited meanwhile: read the new version once more
                if attempt:
                    raise


def _number(comment_id: str) -> int:
    if not comment_id.isdigit():
        raise NotFound(f"{comment_id!r}: not a Bitbucket comment id")
    return int(comment_id)

