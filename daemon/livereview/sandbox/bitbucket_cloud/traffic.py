"""The fake Bitbucket Cloud's traffic: credentials, the hourly quota, faults and the request log.

`BitbucketCloudTraffic` is a base class of `FakeBitbucketCloud` (state.py),
which owns the lock and the records. Bitbucket's rules as documented: Basic auth is an
account's login with its API token (or app password); an access token is a Bearer token
acting as its own app user (https://developer.atlassian.com/cloud/bitbucket/rest/intro/
#authentication). Every authenticated request counts against 1 000 per rolling hour per
account (https://support.atlassian.com/bitbucket-cloud/docs/api-request-limits/); over it,
429 "Rate limit for this resource has been exceeded" (…/kb/bitbucket-cloud-rate-limit-
troubleshooting). Only access tokens get `X-RateLimit-Limit`, `X-RateLimit-Resource` and
`X-RateLimit-NearLimit` (under 20 % left)
(https://bitbucket.org/blog/introducing-scaled-rate-limits-for-bitbucket-cloud-api).
Whether a 304 is charged is not documented: the fake charges it, the cautious assumption.
"""

from __future__ import annotations

import base64
import binascii
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta

from livereview.sandbox.bitbucket_cloud.model import Account, BitbucketError, Credential
from livereview.sandbox.loopback import LoopbackTraffic, locked

WINDOW = timedelta(hours=1)


class BitbucketCloudTraffic(LoopbackTraffic):
    credentials: dict[str, Credential]  # secret -> credential
    rate_limit_per_hour: int
    _used: dict[str, deque[datetime]]  # account uuid -> request times in the window
    now: Callable[..., datetime]

    @locked
    def credential_for(self, authorization: str | None) -> Credential:
        """`Authorization: Basic base64(login:secret)` or `Bearer <access token>`."""
        scheme, _, value = (authorization or "").partition(" ")
        found: Credential | None = None
        if scheme.lower() == "basic":
            try:
                login, _, secret = base64.b64decode(value.strip(), validate=True).decode(
                    ).partition(":")
            except (binascii.Error, UnicodeDecodeError):
                login = secret = ""
            found = self.credentials.get(secret)
            if found is not None and (found.login is None or found.login.lower()
                                      != login.lower()):
                found = None
        elif scheme.lower() == "bearer":
            found = self.credentials.get(value.strip())
            if found is not None and found.login is not None:
                found = None  # an API token goes with its account's login (Basic)
        if found is None:
            raise BitbucketError(401, "Token is invalid, expired, or not supported for this "
                                 "endpoint.")
        return found

    def _window(self, account: Account) -> deque[datetime]:
        used = self._used.setdefault(account.uuid, deque())
        start = self.now() - WINDOW
        while used and used[0] <= start:
            used.popleft()
        return used

    @locked
    def check_rate_limit(self, credential: Credential) -> None:
        if len(self._window(credential.account)) >= self.rate_limit_per_hour:
            raise BitbucketError(429, "Rate limit for this resource has been exceeded",
                                 headers=self.quota_headers(credential))

    @locked
    def charge(self, credential: Credential) -> None:
        self._window(credential.account).append(self.now())

    @locked
    def spend_rate_limit(self, credential_secret: str, remaining: int = 0) -> None:
        """Use the quota up until `remaining` requests are left in the hour."""
        credential = self.credentials[credential_secret]
        used = self._window(credential.account)
        used.extend([self.now()] * max(0, self.rate_limit_per_hour - remaining - len(used)))

    @locked
    def rate_limit_used(self, credential_secret: str) -> int:
        return len(self._window(self.credentials[credential_secret].account))

    @locked
    def quota_headers(self, credential: Credential) -> dict[str, str]:
        if not credential.kind.endswith("_access_token"):
            return {}
        left = self.rate_limit_per_hour - len(self._window(credential.account))
        return {"X-RateLimit-Limit": str(self.rate_limit_per_hour),
                "X-RateLimit-Resource": "api",
                "X-RateLimit-NearLimit": "true" if left < self.rate_limit_per_hour * 0.2
                else "false"}

    def rate_limit_headers(self) -> dict[str, str]:
        """What an injected fault carries (the loopback plumbing asks): nothing."""
        return {}
