"""What a host's answer means: rate limited or not, how long to wait, and which typed
`HostError` a failed status is (hosts/base.py)."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import httpx2

from livereview.hosts.base import (
    AuthFailed,
    BadRequest,
    Conflict,
    Forbidden,
    HostError,
    NotFound,
    RateLimited,
    Transient,
)


def status_class(status: int | None) -> str:
    """The `status_class` label of livereview_host_requests_total: 2xx … 5xx, or `error`
    when no answer came."""
    return "error" if status is None else f"{status // 100}xx"


def limit_header(response: httpx2.Response, name: str) -> str:
    """GitLab's `RateLimit-*` or GitHub's `X-RateLimit-*` header, stripped ('' if absent)."""
    return (response.headers.get(f"RateLimit-{name}")
            or response.headers.get(f"X-RateLimit-{name}") or "").strip()


def rate_limited(response: httpx2.Response) -> bool:
    """A 429, or a 403 that is GitHub's way of saying "slow down": the primary limit spent
    (`X-RateLimit-Remaining: 0`) or a secondary limit (`Retry-After`, or a message saying so).
    https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
    """
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    if response.headers.get("Retry-After") or limit_header(response, "Remaining") == "0":
        return True
    return "rate limit" in response.text.lower()


def retry_after(response: httpx2.Response, now: float) -> float | None:
    """Seconds to wait, from `Retry-After` (seconds or HTTP date) or, once a rate limit is
    spent, `RateLimit-Reset` / `X-RateLimit-Reset` (epoch seconds)."""
    value = response.headers.get("Retry-After")
    if value:
        if value.strip().isdigit():
            return float(value)
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - now)
        except (TypeError, ValueError):
            pass
    reset = limit_header(response, "Reset")
    spent = response.status_code == 429 or limit_header(response, "Remaining") == "0"
    if reset.isdigit() and spent and rate_limited(response):
        return max(0.0, float(reset) - now)
    return None


def host_error(method: str, path: str, response: httpx2.Response, wait: float | None) -> HostError:
    status = response.status_code
    what = f"{method} {path}: HTTP {status}"
    if status == 401 and "AuthorisationException" in response.text[:2000]:
        # Bitbucket Data Center answers a missing permission with 401 and this exception (a
        # rejected token names an authentication exception): its REST reference lists 401
        # "insufficient permissions" for every resource, and no 403.
        # https://developer.atlassian.com/server/bitbucket/rest/v906/api-group-pull-requests/
        return Forbidden(f"{what} (the token may not do this)")
    if status == 401:
        return AuthFailed(f"{what} (token rejected or expired)")
    if rate_limited(response):
        return RateLimited(what, wait if wait is not None else 60.0)
    if status == 403:
        return Forbidden(f"{what} (the token may not do this)")
    if status == 404:
        return NotFound(what)
    if status == 400:
        return BadRequest(what)
    if status in (409, 422):
        return Conflict(what)
    if status >= 500:
        return Transient(what)
    return HostError(what)
