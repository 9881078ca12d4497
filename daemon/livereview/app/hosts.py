"""Host settings → a ready adapter over the shared HTTP client."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2

from livereview import __version__
from livereview.hosts.base import Host, PacedInbox
from livereview.hosts.http import HttpClient
from livereview.hosts.routed import Routed, RoutedPaced, TokenRoute
from livereview.settings.repo_globs import RepoPattern
from livereview.settings.secret import Secret

if TYPE_CHECKING:  # git and the review store: loaded when a local host is configured
    from livereview.hosts.local.adapter import LocalBooks
    from livereview.metrics import Metrics
    from livereview.settings.view import HostView


def _headers(settings: HostView, secret: Secret) -> dict[str, str]:
    token = secret.reveal()
    if settings.type == "github":
        # https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api
        return {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"livereview/{__version__}"}
    if settings.type == "bitbucket-cloud":
        # Basic for an account's API token or app password, Bearer for an access token:
        # https://developer.atlassian.com/cloud/bitbucket/rest/intro/#authentication
        if settings.login:
            pair = base64.b64encode(f"{settings.login}:{token}".encode()).decode()
            return {"Authorization": f"Basic {pair}", "Accept": "application/json"}
        return {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if settings.type == "bitbucket-server":
        # HTTP access tokens (personal, project or repository) are sent as Bearer tokens.
        # https://confluence.atlassian.com/bitbucketserver/personal-access-tokens-939515499.html
        return {"Authorization": f"Bearer {token}", "Accept": "application/json",
                "User-Agent": f"livereview/{__version__}"}
    return {"PRIVATE-TOKEN": token}


def connect(settings: HostView, metrics: Metrics | None,
            transport: httpx2.AsyncBaseTransport | None = None,
            books: LocalBooks | None = None) -> Host:
    # git and each repository's review store, no HTTP (docs/DESIGN.md §14)
    if settings.type == "local":
        from livereview.hosts.local.adapter import LocalHost

        return LocalHost(settings.name, books, Path(settings.url or "/"))
    if settings.type not in ("gitlab", "github", "bitbucket-cloud", "bitbucket-server"):
        raise ValueError(f"host type {settings.type} is not supported")
    if not settings.tokens:
        return _adapter(settings, settings.token, metrics, transport)
    # `[[hosts.tokens]]`: an adapter per token, each repo routed to the first table whose
    # patterns match it, else to the host's own token (docs/DESIGN.md "Identities").
    routes = [TokenRoute(_adapter(settings, settings.token, metrics, transport))]
    routes += [TokenRoute(_adapter(settings, t.token, metrics, transport), t.repos)
               for t in settings.tokens]
    kind = RoutedPaced if isinstance(routes[0].host, PacedInbox) else Routed
    return kind(routes, token_picker(settings))


def token_picker(settings: HostView) -> Callable[[str], int]:
    """The index of the token acting in a repo: 1 + the first `[[hosts.tokens]]` table whose
    patterns match it, else 0 (the host's own). GitLab and GitHub resolve paths whatever their
    case, so matching ignores it (settings/repo_globs.py)."""
    tables = [tuple(RepoPattern.of(p, fold=True) for p in t.repos) for t in settings.tokens]

    def pick(repo: str) -> int:
        return next((index + 1 for index, patterns in enumerate(tables)
                     if any(p.matches(repo) for p in patterns)), 0)

    return pick


def _adapter(settings: HostView, token: Secret, metrics: Metrics | None,
             transport: httpx2.AsyncBaseTransport | None) -> Host:
    http = HttpClient(
        base_url=settings.url, headers=_headers(settings, token),
        host_type=settings.type, metrics=metrics, timeout=settings.request_timeout_seconds,
        ca_bundle=settings.ca_bundle, max_concurrency=settings.max_concurrent_requests,
        transport=transport, max_response_bytes=settings.max_response_mb * 2**20)
    # Each host's package is loaded only when a host of its type is configured: the
    # others are memory `livereview run` never uses (bench figure 5).
    if settings.type == "github":
        from livereview.hosts.github.adapter import GitHub
        from livereview.hosts.github.graphql import graphql_url

        return GitHub(settings.name, http, graphql_url=graphql_url(settings.url))
    if settings.type == "bitbucket-cloud":
        from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud

        return BitbucketCloud(settings.name, http, login=settings.login,
                              username=settings.username)
    if settings.type == "bitbucket-server":
        from livereview.hosts.bitbucket_server.adapter import BitbucketServer

        return BitbucketServer(settings.name, http)
    from livereview.hosts.gitlab.adapter import GitLab

    return GitLab(settings.name, http, list_strategy=settings.list_strategy)
