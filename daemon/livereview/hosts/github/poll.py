"""GitHub's cheapest change signals, so that an idle cycle costs one request whatever the
number of watched repositories (DESIGN §3, GitHub polling):

- the pull requests of every watched repository updated since the watermark, in ONE GraphQL
  request: issue searches (`repo:a/b repo:c/d is:pr is:open updated:>=…`) batched because a
  search query is at most 256 characters, each batch an alias of the same request
  (https://docs.github.com/en/graphql/reference/queries#search,
  https://docs.github.com/en/search-github/getting-started-with-searching-on-github/troubleshooting-search-queries#limitations-on-query-length);
- the bot's notifications (`participating=true`: mentions, review requests, replies where
  it commented), read no more often than `X-Poll-Interval` says and revalidated with
  `If-Modified-Since` (a 304 costs no rate limit), each thread marked read only after what
  it announced is stored (https://docs.github.com/en/rest/activity/notifications).

The notifications API does not accept fine-grained personal access tokens: a 403 or 401
there turns the inbox off for good (logged once) and the search alone carries the changes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import httpx2
import structlog

from livereview.core.model import ChangedMR, MRKey
from livereview.hosts.base import AuthFailed, BadResponse, Forbidden, HostError, NotFound
from livereview.hosts.github.graphql import GraphQL
from livereview.hosts.github.payloads import iso_stamp
from livereview.hosts.http import HttpClient, decoded
from livereview.hosts.payload import JsonObject, json_objects

log = structlog.get_logger("livereview.github")
MAX_QUERY = 256  # characters in one search query (GitHub's limit)
MAX_RESULTS = 1000  # results one search query can reach (GitHub's cap)
BATCHES_PER_REQUEST = 40  # searches aliased into one GraphQL request
DEFAULT_POLL_INTERVAL = 60.0  # seconds, until GitHub's X-Poll-Interval says otherwise
MAX_NOTIFICATION_PAGES = 10  # 50 a page, newest first: older unread ones wait their turn

_SEARCH_FIELDS = """issueCount pageInfo { hasNextPage endCursor }
    nodes { ... on PullRequest { number updatedAt repository { nameWithOwner } } }"""


def search_batches(repos: tuple[str, ...], since: datetime) -> list[tuple[str, tuple[str, ...]]]:
    """(query, its repos): as many `repo:` qualifiers per query as fit in 256 characters."""
    tail = f"is:pr is:open updated:>={iso_stamp(since)}"
    batches: list[tuple[str, tuple[str, ...]]] = []
    current: list[str] = []
    for repo in repos:
        words = [*current, f"repo:{repo}"]
        if current and len(" ".join([*words, tail])) > MAX_QUERY:
            batches.append((" ".join([*current, tail]), tuple(r[5:] for r in current)))
            words = [f"repo:{repo}"]
        current = words
    if current:
        batches.append((" ".join([*current, tail]), tuple(r[5:] for r in current)))
    return batches


def search_document(count: int) -> str:
    variables = ", ".join(f"$q{i}: String!, $a{i}: String" for i in range(count))
    fields = "\n".join(f"  b{i}: search(type: ISSUE, first: 100, query: $q{i}, after: $a{i}) "
                       f"{{ {_SEARCH_FIELDS} }}" for i in range(count))
    return f"query Changed({variables}) {{\n{fields}\n}}"


def _changed(page: JsonObject, watched: dict[str, str]) -> list[ChangedMR]:
    found = []
    for node in page.objects("nodes"):
        repository = node.obj_or_none("repository")
        if repository is None or not node.has("number"):  # an issue: not ours
            continue
        repo = watched.get(repository.text("nameWithOwner").lower())
        if repo is not None:
            found.append(ChangedMR(repo, node.number("number"), node.time("updatedAt")))
    return found


async def search_changed(graphql: GraphQL, repos: tuple[str, ...], since: datetime
                         ) -> tuple[list[ChangedMR], tuple[str, ...]]:
    """PRs of `repos` updated at or after `since`, and the repos a search cannot cover
    (a batch with over 1 000 matches) for the caller to list itself."""
    watched = {r.lower(): r for r in repos}
    pending: list[tuple[str, tuple[str, ...], str | None]] = [
        (query, batch, None) for query, batch in search_batches(repos, since)]
    found: list[ChangedMR] = []
    uncovered: list[str] = []
    while pending:
        now, pending = pending[:BATCHES_PER_REQUEST], pending[BATCHES_PER_REQUEST:]
        variables: dict[str, str | None] = {}
        for i, (query, _, after) in enumerate(now):
            variables[f"q{i}"], variables[f"a{i}"] = query, after
        data = await graphql.run("search", search_document(len(now)), dict(variables))
        for i, (query, batch, _) in enumerate(now):
            page = data.obj_or_none(f"b{i}")
            if page is None:
                raise BadResponse(f"GraphQL search: no answer for batch {i}")
            if page.number("issueCount") > MAX_RESULTS:
                uncovered += batch
                continue
            found += _changed(page, watched)
            info = page.obj("pageInfo")
            if info.flag("hasNextPage"):
                pending.append((query, batch, info.text("endCursor")))
    return found, tuple(uncovered)


@dataclass(frozen=True)
class Notice:
    """One unread notification thread about a watched pull request."""

    thread_id: str
    key: MRKey
    reason: str


def notices(items: list[JsonObject], host: str, watched: dict[str, str]) -> list[Notice]:
    """The threads about pull requests of watched repos; the rest is not ours to read."""
    found = []
    for item in items:
        subject = item.obj("subject")
        if subject.text_or("type") != "PullRequest":
            continue
        repo = watched.get(item.obj("repository").text("full_name").lower())
        url = subject.text_or("url").rstrip("/")
        head, _, number = url.rpartition("/")
        if repo is None or not head.endswith("/pulls") or not number.isdigit():
            continue
        found.append(Notice(item.token("id"), MRKey(host, repo, int(number)),
                            item.text_or("reason")))
    return found


@dataclass
class Notifications:
    """The bot's notification inbox, read when GitHub's X-Poll-Interval allows."""

    http: HttpClient
    host: str
    clock: Callable[[], float] = time.monotonic
    last_modified: str = ""
    next_at: float = 0.0  # clock() before which GitHub asked not to be polled
    off: str = ""  # why the inbox is not used ("" while it is)
    # Threads read but not marked read yet (what they announced is not stored yet): handed
    # out again on every read, 304 or not, until marked — a failed sync loses none.
    unmarked: dict[str, MRKey] = field(default_factory=dict)

    def due(self) -> bool:
        return not self.off and self.clock() >= self.next_at

    def _pace(self, response: httpx2.Response | None) -> None:
        header = response.headers.get("X-Poll-Interval", "") if response is not None else ""
        interval = float(header) if header.isdigit() else DEFAULT_POLL_INTERVAL
        self.next_at = self.clock() + interval

    async def read(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        """Unread threads about watched PRs: {PR: thread ids}. Nothing (and no request)
        before X-Poll-Interval has passed; a failure waits one interval and is logged."""
        if not self.due():
            return {}
        headers = {"If-Modified-Since": self.last_modified} if self.last_modified else {}
        params: dict[str, str] = {"participating": "true", "per_page": "50"}
        found: dict[str, MRKey] = {}
        watched = {r.lower(): r for r in repos}
        response: httpx2.Response | None = None
        try:
            for _ in range(MAX_NOTIFICATION_PAGES):
                response = await self.http.request("GET", "/notifications", params=params,
                                                    headers=headers)
                if response.status_code == 304:
                    break
                body = await decoded(response, "GET /notifications")
                found.update((n.thread_id, n.key) for n in notices(
                    json_objects(body, "GET /notifications"), self.host, watched))
                link = response.links.get("next", {}).get("url")
                if not link:
                    break
                params, headers = dict(httpx2.URL(link).params.multi_items()), {}
        except (AuthFailed, Forbidden) as exc:
            self.off = str(exc)
            log.warning("github_notifications_off", host=self.host, reason=self.off,
                        effect="changes come from the search alone (a fine-grained token "
                        "cannot read notifications)")
            return {}
        except HostError as exc:
            self._pace(None)
            log.warning("github_notifications_failed", host=self.host,
                        error=f"{type(exc).__name__}: {exc}")
            return {}
        self._pace(response)
        if response is not None and response.status_code != 304:
            self.last_modified = response.headers.get("Last-Modified", "")
        self.unmarked.update(found)
        inbox: dict[MRKey, list[str]] = {}
        for thread_id, key in self.unmarked.items():
            inbox.setdefault(key, []).append(thread_id)
        return inbox

    async def mark_read(self, thread_ids: list[str]) -> None:
        """Each thread read, once what it announced is stored (never before: a crash
        between the two leaves it unread, to be read again)."""
        for thread_id in thread_ids:
            if thread_id.isdigit():
                with contextlib.suppress(NotFound):  # gone already: nothing left to mark
                    await self.http.request("PATCH", f"/notifications/threads/{thread_id}")
            self.unmarked.pop(thread_id, None)
