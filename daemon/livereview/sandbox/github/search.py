"""The fake GitHub's issue search (GraphQL `search(type: ISSUE, query: …)`): the qualifiers a
poller uses, with GitHub's rules for them.

https://docs.github.com/en/search-github/searching-on-github/searching-issues-and-pull-requests
— `repo:owner/name` (several are OR'ed), `is:pr` / `is:issue` / `type:pr`, `is:open` /
`is:closed` / `state:…`, `is:merged`, `updated:` with `>=`, `>`, `<=`, `<` and a date or
an ISO 8601 time (`2017-01-01T01:00:00Z`), `sort:updated-desc` (and -asc, created-…).
Results are capped at 1 000 per query, and a query longer than 256 characters is refused
(https://docs.github.com/en/search-github/getting-started-with-searching-on-github/
troubleshooting-search-queries#limitations-on-query-length). Free text is not modelled:
a word that is not a qualifier is refused, so a poller cannot rely on it by mistake.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from livereview.sandbox.github.model import PullRequest, Repo

MAX_QUERY = 256
MAX_RESULTS = 1000
_COMPARE = re.compile(r"^(>=|<=|>|<)?(.+)$")


class SearchError(Exception):
    """A query GitHub would refuse; GraphQL reports it as an error of the `search` field."""


def _when(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SearchError(f"invalid date in search query: {text!r}") from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _matches_time(value: datetime, spec: str) -> bool:
    m = _COMPARE.match(spec)
    if m is None:
        raise SearchError(f"invalid date qualifier: {spec!r}")
    op, at = m[1] or "=", _when(m[2])
    if op == "=" and "T" not in m[2]:  # a bare date: that whole day
        return value.date() == at.date()
    return {"=": value == at, ">=": value >= at, ">": value > at, "<=": value <= at,
            "<": value < at}[op]


def search(repos: dict[int, Repo], query: str) -> list[PullRequest]:
    """Issues and PRs matching `query`, ordered as its `sort:` says (default: newest
    update first, as the poller asks)."""
    if len(query) > MAX_QUERY:
        raise SearchError("The search is longer than 256 characters.")
    wanted: set[str] = set()
    kinds: set[bool] = set()
    states: set[str] = set()
    times: list[str] = []
    order = "updated-desc"
    for word in query.split():
        name, sep, value = word.partition(":")
        if not sep or not value:
            raise SearchError(f"the fake search models qualifiers only, not {word!r}")
        if name == "repo":
            wanted.add(value.lower())
        elif (name in ("is", "type")) and value in ("pr", "issue"):
            kinds.add(value == "pr")
        elif name in ("is", "state") and value in ("open", "closed", "merged"):
            states.add(value)
        elif name == "updated":
            times.append(value)
        elif name == "sort":
            order = value
        else:
            raise SearchError(f"unknown qualifier {name!r}")
    found = [pr for repo in repos.values()
             if not wanted or repo.full_name.lower() in wanted
             for pr in repo.issues.values()
             if (not kinds or pr.is_pull in kinds)
             and (not states or _state(pr) & states)
             and all(_matches_time(pr.updated_at, t) for t in times)]
    field, _, direction = order.partition("-")
    key = (lambda p: (p.created_at, p.id)) if field == "created" else (
        lambda p: (p.updated_at, p.id))
    found.sort(key=key, reverse=direction != "asc")
    return found[:MAX_RESULTS]


def _state(pr: PullRequest) -> set[str]:
    if pr.state == "open":
        return {"open"}
    return {"closed", "merged"} if pr.merged_at else {"closed"}
