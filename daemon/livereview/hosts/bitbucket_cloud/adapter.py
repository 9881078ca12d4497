"""Bitbucket Cloud (REST 2.0, https://api.bitbucket.org/2.0) ⇄ the review model.

Only this module and payloads.py know Bitbucket Cloud's JSON. Lists come
as pages `{"values": […], "next": URL}`; the next request keeps our path and takes only the
query of `next`, so a host's answer never sends the credential anywhere else. Every request
is paid from the hourly quota (budget.py). There is no reactions API: the
worker acknowledges with a short reply (Capabilities.reactions = False).

Docs: https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pullrequests/,
…/rest/api-group-commits/#api-repositories-workspace-repo-slug-diff-spec-get,
…/rest/api-group-source/, …/rest/api-group-users/#api-user-get, filtering and paging:
https://developer.atlassian.com/cloud/bitbucket/rest/intro/#filtering
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncGenerator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx2
import structlog

from livereview.core.model import ChangedMR, Identity, MRKey, Snapshot, Thread
from livereview.hosts.base import (
    AccessNote,
    BadResponse,
    Capabilities,
    NotFound,
    OverHttp,
    Unsupported,
)
from livereview.hosts.bitbucket_cloud import payloads
from livereview.hosts.bitbucket_cloud.access import Credential, notes, quota
from livereview.hosts.bitbucket_cloud.budget import Budget, Use
from livereview.hosts.bitbucket_cloud.review import BitbucketCloudReview
from livereview.hosts.bitbucket_cloud.writing import BitbucketCloudWrites
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject, json_object
from livereview.hosts.revalidate import Keep, Revalidate, keeping, revalidated

log = structlog.get_logger("livereview.bitbucket_cloud")
PAGELEN = 100  # the documented maximum for comments; lists cap it themselves
MAX_PAGES = 2000  # 200 000 comments: a `next` that never ends is the host's fault
# Listings ask for PRs updated since a time rounded down to this, so the URL stays the same
# for a while and an idle listing is revalidated by its ETag (a 304 saves the body).
SINCE_STEP = timedelta(minutes=10)
CACHED_PRS = 256


class _Seen:
    """What fetch_mr read last for one pull request, and the PR's state it read it at."""

    __slots__ = ("activity", "comments", "commits", "stamp")

    def __init__(self, stamp: tuple[str, ...], comments: list[JsonObject],
                 commits: list[JsonObject], activity: list[JsonObject]) -> None:
        self.stamp, self.comments, self.commits = stamp, comments, commits
        self.activity = activity


class BitbucketCloud(BitbucketCloudWrites, BitbucketCloudReview, OverHttp):
    type = "bitbucket-cloud"
    capabilities = Capabilities(reactions=False, resolve=True, threaded_general_comments=True,
                                instance_wide_listing=False, mention_inbox=False)

    def __init__(self, name: str, http: HttpClient, *, login: str | None = None,
                 username: str | None = None) -> None:
        self.name = name
        self.http = http
        self.login = login  # Basic auth as this account; else the secret is an access token
        self.username = username
        self.budget = Budget(limit=lambda: http.rate_limit_limit)
        # An access token's bot user: named after the token (hosts[].username), its uuid
        # learned from the first comment it posts.
        self._me: payloads.Me | None = (
            None if login else payloads.Me(None, username or "", app_user=True))
        self._credential: Credential | None = None
        self._owed: dict[str, datetime | None] = {}  # repo → oldest `since` not listed yet
        self._listed_at: dict[str, float] = {}
        self._seen: OrderedDict[MRKey, _Seen] = OrderedDict()

    @property
    def listing_is_cheap(self) -> bool:
        return False


    # ---- requests ---------------------------------------------------------------------------
    def _repo(self, repo: str) -> str:
        workspace, _, slug = repo.partition("/")
        if not workspace or not slug or "/" in slug:
            raise NotFound(f"{repo}: a Bitbucket repository is workspace/slug")
        return f"/repositories/{quote(workspace, safe='')}/{quote(slug, safe='')}"

    def _pr(self, key: MRKey) -> str:
        return f"{self._repo(key.repo)}/pullrequests/{key.iid}"

    def _remember(self, response: httpx2.Response) -> None:
        kind = response.headers.get("X-Credential-Type")
        if kind is not None:
            self._credential = Credential.from_headers(kind, response.headers.get(
                "X-OAuth-Scopes"))

    async def _request(self, method: str, path: str, use: Use, **kwargs: Any
                       ) -> httpx2.Response:
        await self.budget.take(use)
        response = await self.http.request(method, path, **kwargs)
        self._remember(response)
        return response

    async def _one(self, method: str, path: str, use: Use = Use.READ, *,
                   conditional: bool = False, **kwargs: Any) -> JsonObject:
        await self.budget.take(use)
        return await self.http.one(method, path, conditional=conditional, **kwargs)

    async def _pages(self, path: str, params: dict[str, Any] | None = None,
                     use: Use = Use.READ, *, conditional: Revalidate = False,
                     keep: Keep = None) -> AsyncGenerator[list[JsonObject], None]:
        """Each page's `values`, following `next` (its query only, on our path)."""
        query: dict[str, Any] = {"pagelen": PAGELEN, **(params or {})}
        asked: set[str] = set()
        for number in range(MAX_PAGES):
            page = await self._one("GET", path, use, conditional=revalidated(conditional, number),
                                   keep=keep, params=query)
            yield page.objects("values")
            link = page.text_or("next")
            if not link:
                return
            try:
                query = dict(httpx2.URL(link).params.multi_items())
            except (httpx2.InvalidURL, ValueError):
                raise page.error("next", "not a URL") from None
            if str(sorted(query.items())) in asked:
                raise page.error("next", "points at a page already read")
            asked.add(str(sorted(query.items())))
        raise BadResponse(f"GET {path}: more than {MAX_PAGES} pages")

    async def _all(self, path: str, params: dict[str, Any] | None = None) -> list[JsonObject]:
        return [v async for page in self._pages(path, params) for v in page]

    # ---- who ------------------------------------------------------------------------------
    async def whoami(self) -> Identity:
        """Basic auth: the account, from `GET /user`. An access token has no account there
        (Bitbucket answers it with an error): it is checked on a repository listing, and the
        bot is its own bot user, named after the token (`hosts[].username`)."""
        if self.login:
            user = json_object(await self._json(await self._request(
                "GET", "/user", Use.READ), "GET /user"), "GET /user")
            me = payloads.Accounts(None).actor(user)
            self._me = payloads.Me(me.id, me.username, app_user=False,
                                   account_id=user.text_or("account_id"))
            return Identity(self.name, me.id, me.username)
        await self._request("GET", "/repositories", Use.READ, params={"pagelen": 1})
        assert self._me is not None
        # Until the bot user's uuid is seen it is known by name only (and an id that no
        # account has, so nothing is taken for the bot by id).
        return Identity(self.name, self._me.uuid or f"access-token:{self._me.name}",
                        self._me.name)

    @staticmethod
    async def _json(response: httpx2.Response, endpoint: str) -> object:
        try:
            return response.json()
        except (ValueError, RecursionError):
            raise BadResponse(f"{endpoint}: expected JSON") from None

    def access_notes(self) -> list[AccessNote]:
        return [*notes(self._credential, login=self.login,
                       bot=self._me.name if self._me else self.username or ""),
                quota(self.http.rate_limit_limit, self.budget.per_hour)]

    async def repo_exists(self, repo: str) -> bool:
        try:
            await self._request("GET", self._repo(repo), Use.READ, conditional=True)
        except NotFound:
            return False
        return True

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        return {}  # Bitbucket Cloud has no notifications API

    async def clear_mentions(self, item_ids: list[str]) -> None:
        return None

    @property
    def involvement_feed(self) -> bool:
        return False

    async def involved_mrs(self, repos: tuple[str, ...], since: datetime | None
                           ) -> list[ChangedMR]:
        """Bitbucket Cloud lists across repositories only the pull requests a user authored
        (`GET /pullrequests/{selected_user}`), never those it reviews or took part in
        (https://jira.atlassian.com/browse/BCLOUD-21950): each repo's listing finds them."""
        raise Unsupported("Bitbucket Cloud has no list of a reviewer's or participant's "
                          "pull requests across repositories")

    def _learn(self, posted: JsonObject) -> None:
        """An access token's bot user is whoever wrote what the token just posted."""
        if self._me is None or self._me.uuid is not None:
            return
        user = posted.obj_or_none("user")
        author = payloads.Accounts(None).actor(user)
        if author.name.lower() != self._me.name.lower():
            log.error("bitbucket_bot_name_mismatch", host=self.name, posts_as=author.name,
                      configured=self._me.name,
                      fix="set hosts[].username to the access token's name")
            return
        self._me = payloads.Me(author.id, self._me.name, app_user=True,
                               account_id=user.text_or("account_id") if user else "")

    def _accounts(self) -> payloads.Accounts:
        return payloads.Accounts(self._me)

    # ---- listing ----------------------------------------------------------------------------
    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]:
        """Open PRs updated at or after `since` (all of them when None), one listing request
        per repo. Within the hourly quota: every repo is listed the first time, and the one
        listed longest ago always; the others only while the quota has room to spare. A repo
        left out owes its `since` and is listed from there next time, so nothing is lost by
        waiting."""
        order = sorted(repos, key=lambda r: self._listed_at.get(r, -1.0))
        changed: list[ChangedMR] = []
        for index, repo in enumerate(order):
            owed = self._owed.get(repo, since)
            start = None if since is None or owed is None else min(since, owed)
            if repo in self._listed_at and index > 0 and not self.budget.available(Use.LIST):
                self._owed[repo] = start
                continue
            use = Use.READ if repo not in self._listed_at or index == 0 else Use.LIST
            changed += await self._list(repo, start, use)
            self._owed.pop(repo, None)
            self._listed_at[repo] = asyncio.get_running_loop().time()
        return changed

    async def _list(self, repo: str, since: datetime | None, use: Use) -> list[ChangedMR]:
        params: dict[str, Any] = {"state": "OPEN", "sort": "-updated_on", "pagelen": 50}
        if since is not None:
            epoch = datetime(2000, 1, 1, tzinfo=UTC)
            stable = epoch + (since - epoch) // SINCE_STEP * SINCE_STEP
            params["q"] = f"updated_on >= {stable.astimezone(UTC).isoformat()}"
        found: list[ChangedMR] = []
        pages = self._pages(f"{self._repo(repo)}/pullrequests", params, use,
                            conditional="first", keep=keeping("id", "updated_on",
                                                              items="values"))
        async for page in pages:
            listed = [ChangedMR(repo, pr.number("id"), pr.time("updated_on"), "opened")
                      for pr in page]
            fresh = [mr for mr in listed if since is None or mr.updated_at >= since]
            found += fresh
            if len(fresh) < len(listed):  # newest first: the rest is older
                await pages.aclose()
                break
        return found

    # ---- reading a PR -------------------------------------------------------------------------
    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        """The PR and its conversation. A hot PR is re-read every few seconds: while the PR
        says nothing changed (updated_on, head, comment count), its comments and commits are
        not asked for again — one request instead of three. Whatever this adapter posts
        forgets that first, so a reply whose answer was lost is always read back."""
        key = MRKey(self.name, repo, iid)
        pr = await self._one("GET", self._pr(key), conditional=True)
        stamp = (pr.text_or("updated_on"), payloads.short_hash(pr.obj_or_none("source")),
                 str(pr.number_or_none("comment_count")))
        seen = self._seen.get(key)
        if seen is None or seen.stamp != stamp:
            comments = await self._all(f"{self._pr(key)}/comments")
            commits = await self._all(f"{self._pr(key)}/commits")
            activity: list[JsonObject] = []
            if any(_outdated(c) for c in comments):
                activity = await self._all(f"{self._pr(key)}/activity")
            seen = _Seen(stamp, comments, commits, activity)
        self._seen[key] = seen
        self._seen.move_to_end(key)
        while len(self._seen) > CACHED_PRS:
            self._seen.popitem(last=False)
        return self._snapshot(key, pr, seen)

    def _snapshot(self, key: MRKey, pr: JsonObject, seen: _Seen) -> Snapshot:
        accounts = self._accounts()
        # Everyone the PR shows first, so a mention of someone who writes later reads too.
        people = [pr.obj_or_none("author"), *(p.obj_or_none("user") for p in
                                              pr.objects("participants")),
                  *pr.objects("reviewers"), *(c.obj_or_none("user") for c in seen.comments)]
        for person in people:
            accounts.actor(person)
        commits = [payloads.commit(c) for c in seen.commits]
        mr = payloads.merge_request(key, pr, commits, accounts)
        at_comment, updates = payloads.history(seen.activity)
        heads = payloads.Heads(
            mr.head_sha, {c: payloads.full_hash(h, commits) for c, h in at_comment.items()},
            tuple((when, payloads.full_hash(h, commits)) for when, h in updates))
        threads = payloads.threads(seen.comments, accounts, heads)
        return Snapshot(mr=mr, threads=tuple(threads),
                        commits=tuple(payloads.newest_first(commits, mr.head_sha)))

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        """One thread as it is now, read afresh (the worker adopts lost replies from it)."""
        self._seen.pop(key, None)
        snapshot = await self.fetch_mr(key.repo, key.iid)
        found = snapshot.thread(thread_id)
        if found is None:
            raise NotFound(f"comment {thread_id} not in {key}")
        return found

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The PR's changes as one unified diff, three-dot from where the source left the
        destination (`topic=true`, what the PR shows): of the current head, or of `head_sha`
        (a thread written before a push points there)."""
        pr = await self._one("GET", self._pr(key), conditional=True)
        source = head_sha or payloads.short_hash(pr.obj_or_none("source"))
        destination = payloads.short_hash(pr.obj_or_none("destination"))
        for sha in (source, destination):
            if not sha.isalnum():
                raise pr.error("source", f"not a commit hash: {sha[:40]!r}")
        path = f"{self._repo(key.repo)}/diff/{{}}..{destination}"
        try:
            response = await self._request("GET", path.format(source), Use.READ,
                                           params={"topic": "true"})
        except NotFound:
            current = payloads.short_hash(pr.obj_or_none("source"))
            if not head_sha or source == current:
                raise
            # The old head is gone (a force-push, then garbage collection): use the current.
            log.info("diff_version_gone", host=self.name, mr=str(key), head=head_sha)
            response = await self._request("GET", path.format(current), Use.READ,
                                           params={"topic": "true"})
        return response.text

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        response = await self._request(
            "GET", f"{self._repo(repo)}/src/{quote(ref, safe='')}/{quote(path)}", Use.READ)
        return response.text

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        """Files directly in `directory` (its listing is paged JSON; a file answers itself)."""
        folder = quote(directory.strip("/"))
        path = f"{self._repo(repo)}/src/{quote(ref, safe='')}/" + (f"{folder}/" if folder else "")
        response = await self._request("GET", path, Use.READ, params={"pagelen": PAGELEN})
        if "json" not in response.headers.get("Content-Type", ""):
            return []
        first = json_object(await self._json(response, f"GET {path}"), f"GET {path}")
        entries = first.objects("values")
        if first.text_or("next"):
            entries = [e async for page in self._pages(path) for e in page]
        return [e.text("path") for e in entries if e.text_or("type") == "commit_file"]

    def _forget(self, key: MRKey) -> None:
        """Drop what was read of the MR: a write changes it (and its answer may be lost)."""
        self._seen.pop(key, None)

def _outdated(comment: JsonObject) -> bool:
    inline = comment.obj_or_none("inline")
    return inline is not None and inline.flag("outdated")
