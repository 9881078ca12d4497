"""The fake GitHub's traffic: tokens, fault injection, the request log and rate limits.

`GitHubTraffic` is a base class of `FakeGitHub` (state.py), which owns the lock and
the records. GitHub's rules: the primary limit is a budget per hour per token (5000 for a
user), charged for every request except a 304 Not Modified, and counted apart for GraphQL;
secondary limits answer 403 with Retry-After.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from livereview.sandbox.github.model import GitHubError, User
from livereview.sandbox.loopback import LoopbackTraffic, locked

_RATE_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"


class GitHubTraffic(LoopbackTraffic):
    """Tokens and rate limits; faults and the request log come from `LoopbackTraffic`."""

    tokens: dict[str, str]
    _limits: dict[str, list[int]]
    _user: Callable[[str], User]
    now: Callable[..., datetime]

    @locked
    def user_for_token(self, authorization: str | None) -> User:
        """`Authorization: Bearer <token>` or `token <token>`."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or not token:
            raise GitHubError(401, "Requires authentication",
                              "https://docs.github.com/rest/users/users#get-the-authenticated-user")
        login = self.tokens.get(token.strip())
        if login is None:
            raise GitHubError(401, "Bad credentials", "https://docs.github.com/rest")
        return self._user(login)

    @locked
    def secondary_rate_limit(self, method: str, path_regex: str, *, retry_after: int = 1,
                             times: int = 1) -> None:
        """GitHub's answer to too many content-creating requests: 403 with Retry-After."""
        body = ('{"message":"You have exceeded a secondary rate limit. Please wait a few '
                'minutes before you try again.","documentation_url":"https://docs.github.com/'
                'rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",'
                '"status":"403"}')
        self.inject_fault(method, path_regex, status=403, body=body, times=times,
                          headers={"Retry-After": str(retry_after)})

    def _window(self, resource: str) -> list[int]:
        window = self._limits[resource]
        now = int(self.now().timestamp())
        if now >= window[2]:
            window[1], window[2] = 0, now + 3600
        return window

    @locked
    def check_rate_limit(self, resource: str) -> None:
        """403 once the hour's budget is spent (the primary rate limit)."""
        limit, used, _ = self._window(resource)
        if used >= limit:
            raise GitHubError(403, "API rate limit exceeded for user. (But here's the good news:"
                              " Authenticated requests get a higher rate limit.)",
                              f"{_RATE_DOCS}#about-the-primary-rate-limit",
                              headers=self.rate_limit_headers(resource))

    @locked
    def charge(self, resource: str) -> None:
        """Count one request; a 304 Not Modified is not charged (GitHub's rule)."""
        self._window(resource)[1] += 1

    @locked
    def spend_rate_limit(self, resource: str = "core", remaining: int = 0) -> None:
        window = self._window(resource)
        window[1] = window[0] - remaining

    @locked
    def rate_limit_used(self, resource: str = "core") -> int:
        return self._window(resource)[1]

    @locked
    def rate_limit_headers(self, resource: str = "core") -> dict[str, str]:
        limit, used, reset = self._window(resource)
        return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(max(0, limit - used)),
                "X-RateLimit-Reset": str(reset), "X-RateLimit-Used": str(used),
                "X-RateLimit-Resource": resource}
