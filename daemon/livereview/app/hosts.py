"""Host settings → a ready adapter over the shared HTTP client."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx2

from livereview import __version__
from livereview.hosts.base import Host
from livereview.hosts.http import HttpClient
from livereview.hosts.local.adapter import LocalBooks, LocalHost
from livereview.metrics import Metrics
from livereview.settings import HostSettings


def _headers(settings: HostSettings) -> dict[str, str]:
    token = settings.token.reveal()
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


def connect(settings: HostSettings, metrics: Metrics,
            transport: httpx2.AsyncBaseTransport | None = None,
            books: LocalBooks | None = None) -> Host:
    # git and each repository's review store, no HTTP (docs/DESIGN.md §14)
    if settings.type == "local":
        return LocalHost(settings.name, books, Path(settings.url or "/"))
    if settings.type not in ("gitlab", "github", "bitbucket-cloud", "bitbucket-server"):
        raise ValueError(f"host type {settings.type} is not supported")
    http = HttpClient(
        base_url=settings.url, headers=_headers(settings),
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
