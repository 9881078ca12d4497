"""`<MR>`: the merge request's web URL on any configured host, or `HOST:REPO!IID`.

A URL is matched against each configured host's web address (derived from its API base
where the two differ: api.github.com → github.com, api.bitbucket.org/2.0 → bitbucket.org)
and the host type's path for a merge request; anything after it (`/diffs`, `#note_1`)
is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from livereview.core.model import MRKey
from livereview.core.sanitize import one_line
from livereview.tools.errors import BadInput

if TYPE_CHECKING:
    from livereview.settings.view import HostView

_SHORT = re.compile(r"(?P<host>[^:/\s]+):(?P<repo>[^!\s]+?)/?!(?P<iid>\d{1,18})")
_PATHS = {
    "gitlab": re.compile(r"/(?P<repo>.+?)/-/merge_requests/(?P<iid>\d{1,18})(?:[/?#].*)?"),
    "github": re.compile(r"/(?P<repo>[^/]+/[^/]+)/pull/(?P<iid>\d{1,18})(?:[/?#].*)?"),
    "bitbucket-cloud": re.compile(
        r"/(?P<repo>[^/]+/[^/]+)/pull-requests/(?P<iid>\d{1,18})(?:[/?#].*)?"),
    "bitbucket-server": re.compile(
        r"/projects/(?P<project>[^/]+)/repos/(?P<slug>[^/]+)/pull-requests/(?P<iid>\d{1,18})"
        r"(?:[/?#].*)?"),
}
EXPECTED = ("expected the MR's web URL (…/-/merge_requests/N, …/pull/N, …/pull-requests/N) "
            "or HOST:REPO!IID")


def web_base(host: HostView) -> str:
    """Where the host's pages live: GitHub's and Bitbucket Cloud's `url` is the API's."""
    url = host.url.rstrip("/")
    if host.type == "github":
        parts = urlsplit(url)
        if (parts.hostname or "").startswith("api.") and not parts.path:
            return f"{parts.scheme}://{(parts.netloc or '').removeprefix('api.')}"
        return url.removesuffix("/api/v3")
    if host.type == "bitbucket-cloud":
        if urlsplit(url).hostname == "api.bitbucket.org":
            return "https://bitbucket.org"
        return url.removesuffix("/2.0")
    return url


def _same_site(url: str, base: str) -> str | None:
    """The path of `url` below `base` (scheme and host compared case-insensitively)."""
    u, b = urlsplit(url), urlsplit(base)
    if (u.scheme.lower(), u.netloc.lower()) != (b.scheme.lower(), b.netloc.lower()):
        return None
    prefix = b.path.rstrip("/")
    if prefix and not (u.path == prefix or u.path.startswith(prefix + "/")):
        return None
    rest = u.path[len(prefix):]
    return rest + (f"?{u.query}" if u.query else "") + (f"#{u.fragment}" if u.fragment else "")


def parse_mr(hosts: Sequence[HostView], text: str) -> MRKey:
    """The MR `text` names, or BadInput saying what was expected."""
    text = text.strip()
    names = {h.name: h for h in hosts}
    short = _SHORT.fullmatch(text)
    if short and "://" not in text:
        if short["host"] not in names:
            raise BadInput(f"{one_line(text)}: no configured host named {short['host']!r} (hosts: "
                           f"{', '.join(names) or 'none'})")
        return MRKey(short["host"], short["repo"].strip("/"), int(short["iid"]))
    for host in hosts:
        path = _same_site(text, web_base(host))
        match = _PATHS[host.type].fullmatch(path) if path is not None and \
            host.type in _PATHS else None
        if match is None:
            continue
        if host.type == "bitbucket-server":
            return MRKey(host.name, f"{match['project']}/{match['slug']}", int(match["iid"]))
        return MRKey(host.name, match["repo"], int(match["iid"]))
    # The text is the caller's: one line (no U+2028 or escapes), so the error stays one.
    raise BadInput(f"{one_line(text)}: not a merge request of a configured host ({EXPECTED})")
