"""GitHub: the active tier's looks at a pull request (docs/DESIGN.md §6) — one conditional
`GET` of it on the ETag of the last look's own answer, the ETags of the last LOOKS_KEPT
pull requests looked at, and forgetting one when the read a look began failed.

Docs: https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate
(a 304 costs no rate limit).
"""

from __future__ import annotations

from livereview.core.model import MRKey
from livereview.hosts.github.rest import pull_path
from livereview.hosts.http import HttpClient

LOOKS_KEPT = 256  # the active tier's last looks remembered (its ETag per PR)


class Looks:
    """The ETag of each pull request's last look, oldest first."""

    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self._looked: dict[MRKey, str] = {}  # the active tier's last look: its ETag

    async def changed(self, key: MRKey) -> bool:
        """One conditional `GET` of the pull request, on the ETag of the last look's own
        answer: a new comment, review comment, review or push changes its `comments` /
        `review_comments` counts, head or `updated_at`, hence its ETag; a 304 costs no rate
        limit. An edited comment may not: the hot cycle's full read sees those.

        Not on the ETag `fetch_mr` remembered: its five requests run at once, so a comment
        written meanwhile can be in the pull request it read (its count) and not in the
        comments it read — every look after it answered 304, and the question waited for
        the hot cycle (bench 2d). A change after a look's answer is in the next look's;
        one before it is in the read that look begins — and if that read fails, the
        poller forgets this answer (`forget_look`), or every later look would say
        "unchanged" though the change was never stored.

        A 200 is also remembered as the client's conditional answer for the pull request,
        so the read it begins revalidates it (a 304, no rate limit) rather than asking for
        it in full again; the read's other four lists begin after this answer."""
        path = pull_path(key)
        seen = self._looked.get(key)
        response = await self.http.request(
            "GET", path, headers={"If-None-Match": seen} if seen else {})
        if response.status_code == 304 and seen:
            return False
        self._looked.pop(key, None)
        etag = response.headers.get("ETag", "")
        self._looked[key] = etag
        while len(self._looked) > LOOKS_KEPT:  # PRs long out of the tier
            del self._looked[next(iter(self._looked))]
        if etag and response.status_code == 200:
            self.http.validated.remember(self.http.validated.key(path, None), response)
        return True

    def forget(self, key: MRKey) -> None:
        self._looked.pop(key, None)
