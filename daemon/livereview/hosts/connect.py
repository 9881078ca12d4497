"""Host settings → a ready adapter over the shared HTTP client."""

from __future__ import annotations

import httpx2

from livereview.hosts.base import Host
from livereview.hosts.gitlab import GitLab
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics
from livereview.settings import HostSettings


def connect(settings: HostSettings, metrics: Metrics,
            transport: httpx2.AsyncBaseTransport | None = None) -> Host:
    if settings.type != "gitlab":
        raise ValueError(f"host type {settings.type} is not supported")
    http = HttpClient(
        base_url=settings.url, headers={"PRIVATE-TOKEN": settings.token.reveal()},
        host_type=settings.type, metrics=metrics, timeout=settings.request_timeout_seconds,
        ca_bundle=settings.ca_bundle, max_concurrency=settings.max_concurrent_requests,
        transport=transport)
    return GitLab(settings.name, http, list_strategy=settings.list_strategy)
