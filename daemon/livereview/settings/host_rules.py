"""The rules of a `[[hosts]]` table that need no pydantic: its type, its URL per type, its
identity keys and which keys go together. `HostSettings`' validators call these, and so does
the light reader (settings/light.py): one rule, one place (docs/getting-started.md, "A CLI for
loops")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from livereview.settings.checks import http_url
from livereview.settings.errors import Invalid, Rank, plain, shown
from livereview.settings.repo_globs import check_patterns

HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
SUPPORTED_HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
GITHUB_API = "https://api.github.com"
BITBUCKET_CLOUD_API = "https://api.bitbucket.org/2.0"
# Where each type's URL may be left out.
DEFAULT_URLS = {"github": GITHUB_API, "bitbucket-cloud": BITBUCKET_CLOUD_API}


def host_type(value: str) -> str:
    if value not in HOST_TYPES:
        raise Invalid(f"expected one of {', '.join(HOST_TYPES)}, got {shown(value)}")
    if value not in SUPPORTED_HOST_TYPES:
        raise Invalid(f"{value!r} is not supported by this version yet "
                      f"(supported: {', '.join(SUPPORTED_HOST_TYPES)})")
    return value


def token_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    if not patterns:
        raise Invalid("expected at least one repo path pattern, such as [\"org/*\"]",
                      rank=Rank.MISSING)
    return check_patterns(patterns)


def host_url(kind: str | None, url: str, *, from_file: bool) -> str:
    """`url` as the host of type `kind` uses it. `from_file`: an operator's file, held to the
    API bases; code (the contract tests) points at a fake's bare loopback URL."""
    if kind == "local":  # docs/DESIGN.md §14: the directory its repos' paths are under
        return _local_root(url, from_file=from_file)
    if kind == "bitbucket-cloud":
        return _bitbucket_cloud_url(url, from_file=from_file)
    if kind == "bitbucket-server":
        if not url:
            raise Invalid("is required", rank=Rank.MISSING)
        url = http_url(url)
        # The server's base (https://HOST or https://HOST/CONTEXT): the adapter adds
        # /rest/api/1.0 itself, and /rest/comment-likes/latest for reactions.
        if "/rest/" in f"{urlsplit(url).path.rstrip('/')}/":
            raise Invalid("expected the server's base URL (https://HOST, or https://HOST/"
                          f"CONTEXT), without /rest/api/1.0, got {shown(url)}")
        return url
    if kind != "github":
        if not url:
            raise Invalid("is required", rank=Rank.MISSING)
        return http_url(url)
    url = http_url(url or GITHUB_API)
    # The REST base, not the web UI: api.github.com (api.SUBDOMAIN.ghe.com on GHE.com),
    # or https://HOST/api/v3 on GitHub Enterprise Server.
    parts = urlsplit(url)
    if from_file and not parts.path and not (parts.hostname or "").startswith("api."):
        raise Invalid(f"expected the API base, {GITHUB_API} or https://HOST/api/v3 for "
                      f"GitHub Enterprise Server, got {shown(url)}")
    return url


def _is(kind: Callable[[Path], bool], path: str) -> bool:
    """`Path.is_file`/`is_dir`, false for a name the system refuses to look up (too long, a
    NUL) instead of an exception that would end the command in a traceback."""
    try:
        return kind(Path(path))
    except (OSError, ValueError):
        return False


def _local_root(url: str, *, from_file: bool) -> str:
    """A local host's repos are git working trees under this directory ("/" by default,
    so a repo's path is its absolute path)."""
    root = url or "/"
    if from_file and not _is(Path.is_dir, root):
        raise Invalid(f"expected a directory the repos' paths are under, got {shown(root)}")
    return root


def _bitbucket_cloud_url(url: str, *, from_file: bool) -> str:
    """The REST base, https://api.bitbucket.org/2.0, not the web UI."""
    url = http_url(url or BITBUCKET_CLOUD_API)
    if from_file and not urlsplit(url).path.endswith("/2.0"):
        raise Invalid(f"expected the API base, {BITBUCKET_CLOUD_API}, got {shown(url)}")
    return url


def ca_bundle(path: str | None) -> str | None:
    if path and not _is(Path.is_file, path):
        raise Invalid(f"no such file {plain(path)}")
    return path or None


def username(name: str | None) -> str | None:
    return name or None


def login(value: str | None) -> str | None:
    # Basic auth is `login:secret`: a colon or a blank would change who logs in.
    if value is not None and (not value or ":" in value
                              or any(c.isspace() or not c.isprintable() for c in value)):
        raise Invalid(f"expected an account name or e-mail address, got {shown(value)}")
    return value


def bitbucket_cloud_auth(kind: str, login: str | None, username: str | None) -> None:
    if login is not None and kind != "bitbucket-cloud":
        raise Invalid("only for type = \"bitbucket-cloud\" (its Basic-auth account)", "login")
    if kind == "bitbucket-cloud" and login is None and not username:
        # An access token has no account GET /user could name: its comments are signed
        # by a bot user named after the token.
        raise Invalid("required with an access token (no login): the token's name, "
                      "which Bitbucket shows as the author of what it posts",
                      "username", rank=Rank.MISSING)


def tokens_where_routed(kind: str, tokens: int) -> None:
    # Hosts whose adapters a repo-routed client covers (hosts/routed.py).
    if tokens and kind not in ("gitlab", "github"):
        raise Invalid("only for type = \"gitlab\" or \"github\"", "tokens")


def needs_token(kind: str) -> bool:
    return kind != "local"  # git runs locally: no credential
