"""GitHub: which open pull requests of the watched repositories changed since a time.

After first sight, one GraphQL search covers every repository (poll.py); first sight, a
repository whose search matches over 1 000 pull requests, and a token that may not search
list each repository on its own, on URLs that stay the same between cycles so that an idle
cycle is all 304s (a 304 costs no rate limit: https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate).

Docs: https://docs.github.com/en/rest/pulls/pulls#list-pull-requests,
…/rest/issues/comments#list-issue-comments-for-a-repository,
…/rest/pulls/comments#list-review-comments-in-a-repository.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from datetime import UTC, datetime, timedelta

import structlog

from livereview.core.model import ChangedMR
from livereview.hosts.base import Forbidden
from livereview.hosts.github.graphql import GraphQL
from livereview.hosts.github.payloads import iso_stamp, number_in_url
from livereview.hosts.github.poll import search_changed
from livereview.hosts.github.rest import every_item, repo_path
from livereview.hosts.http import HttpClient
from livereview.hosts.revalidate import keeping

log = structlog.get_logger("livereview.github")
# Repo-wide comment lists are asked for `since` a time rounded down to this, so the URL
# stays the same for a while and is revalidated with its ETag: GitHub does not charge a
# 304 to the rate limit.
SINCE_STEP = timedelta(minutes=10)


class Listing:
    """Lists changed pull requests: by one search while the token may search, else (for
    good, logged once) each repository on its own."""

    def __init__(self, http: HttpClient, graphql: GraphQL, name: str) -> None:
        self.http = http
        self.graphql = graphql
        self.name = name
        self.search_off = ""  # why the search is not used ("" while it is)

    async def changed_mrs(self, repos: tuple[str, ...], since: datetime | None
                          ) -> list[ChangedMR]:
        """Open PRs of `repos` updated at or after `since` (all when None).

        After first sight: one GraphQL request searching every repo (poll.py). An edit
        does not bump a PR: one that mentions the bot comes through the notifications.
        First sight, a repo whose search matches over 1 000 PRs, and a token that may not
        search list per repo instead (`_changed_in`).
        """
        if since is not None and not self.search_off:
            try:
                found, uncovered = await search_changed(self.graphql, repos, since)
            except Forbidden as exc:
                self.search_off = str(exc)
                log.warning("github_search_off", host=self.name, reason=self.search_off,
                            effect="each repository is listed on its own")
            else:
                return found + await self._each(uncovered, since)
        return await self._each(repos, since)

    async def _each(self, repos: tuple[str, ...], since: datetime | None) -> list[ChangedMR]:
        """Per repo, on URLs that stay the same between cycles, so an idle cycle is all
        304s: the open PRs by last update (pages stop at `since`), and — after the first
        cycle — the repo-wide issue and review comments since `since` rounded down to
        SINCE_STEP (an edit may not bump the PR)."""
        # Repos are listed side by side (the HTTP client bounds the concurrency).
        found = await asyncio.gather(*(self._changed_in(repo, since) for repo in repos))
        return [mr for listed in found for mr in listed]

    async def _changed_in(self, repo: str, since: datetime | None) -> list[ChangedMR]:
        changed: dict[int, ChangedMR] = {}
        pages = self.http.items(f"{repo_path(repo)}/pulls", {
            "state": "open", "sort": "updated", "direction": "desc"}, conditional="first",
            keep=keeping("number", "updated_at"))
        async with aclosing(pages):
            async for page in pages:
                listed = [ChangedMR(repo, p.number("number"), p.time("updated_at"), "opened")
                          for p in page]
                fresh = [mr for mr in listed if since is None or mr.updated_at >= since]
                changed.update((mr.iid, mr) for mr in fresh)
                if len(fresh) < len(page):  # sorted by update: the rest is older
                    break
        if since is not None:
            for number, at in await self._commented(repo, since):
                if number not in changed or changed[number].updated_at < at:
                    changed[number] = ChangedMR(repo, number, at, "opened")
        return list(changed.values())

    async def _commented(self, repo: str, since: datetime) -> list[tuple[int, datetime]]:
        """(PR number, comment updated_at) of comments written or edited since `since`."""
        epoch = datetime(2000, 1, 1, tzinfo=UTC)
        stable = epoch + (since - epoch) // SINCE_STEP * SINCE_STEP
        params = {"since": iso_stamp(stable), "sort": "updated", "direction": "asc"}
        found = []
        for c in await every_item(self.http, f"{repo_path(repo)}/issues/comments", params):
            # Issues and PRs share this list; a PR's comment links to …/pull/<n>.
            if "/pull/" in c.text_or("html_url") and (at := c.time("updated_at")) >= since:
                found.append((number_in_url(c, "issue_url"), at))
        for c in await every_item(self.http, f"{repo_path(repo)}/pulls/comments", params):
            if (at := c.time("updated_at")) >= since:
                found.append((number_in_url(c, "pull_request_url"), at))
        return found
