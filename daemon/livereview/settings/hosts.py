"""The `[[hosts]]` sections: each host's type, URL, token (or tokens per group, org or repo)
and what its requests may cost (docs/configuration.md; one page per host in docs/)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, ValidationInfo, field_validator, model_validator

from livereview.settings.errors import Invalid, Rank, plain, shown
from livereview.settings.repo_globs import check_patterns
from livereview.settings.rules import (
    Between,
    Required,
    TomlList,
    http_url,
    one_of,
)
from livereview.settings.secret import Secret, resolve, variable_name
from livereview.settings.section import Section, reading_of

HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
SUPPORTED_HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
GITHUB_API = "https://api.github.com"
BITBUCKET_CLOUD_API = "https://api.bitbucket.org/2.0"
# Where each type's URL may be left out.
DEFAULT_URLS = {"github": GITHUB_API, "bitbucket-cloud": BITBUCKET_CLOUD_API}

VariableName = Annotated[str, AfterValidator(variable_name)]


def _host_type(value: str) -> str:
    if value not in HOST_TYPES:
        raise Invalid(f"expected one of {', '.join(HOST_TYPES)}, got {shown(value)}")
    if value not in SUPPORTED_HOST_TYPES:
        raise Invalid(f"{value!r} is not supported by this version yet "
                      f"(supported: {', '.join(SUPPORTED_HOST_TYPES)})")
    return value


def _token_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    if not patterns:
        raise Invalid("expected at least one repo path pattern, such as [\"org/*\"]",
                      rank=Rank.MISSING)
    return check_patterns(patterns)


class TokenSettings(Section):
    """One `[[hosts.tokens]]` table: the token that acts in the repos its patterns match
    (docs/DESIGN.md "Identities")."""

    derived: ClassVar[dict[str, str]] = {"token": "set token_env or token_file"}
    repos: Annotated[TomlList[str], AfterValidator(_token_patterns)]
    """Repository path patterns this token acts in, as `agent_repos` reads them (`org/*`,
    `group/**`, `org2/repo`); at least one. A repo matched by several tables takes the first;
    a repo matched by none takes the host's own token."""
    token_env: VariableName = ""
    """The environment variable holding this token; this or `token_file` is required."""
    token_file: str = ""
    """A file holding this token; a relative path is read from `$CREDENTIALS_DIRECTORY`."""
    token: Secret = Secret("")

    @model_validator(mode="after")
    def _read_token(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None:
            return self
        token = resolve("token", self.token_env, self.token_file, required=True,
                        both_set=bool(self.token_env), reading=reading)
        return self.model_copy(update={"token": token})


class HostSettings(Section):
    derived: ClassVar[dict[str, str]] = {"token": "set token_env or token_file"}
    name: Required
    """This host's name, which `[[repos]]` entries and MR references (`NAME:REPO!IID`)
    use."""
    type: Annotated[Required, AfterValidator(_host_type)]
    """`gitlab`, `github`, `bitbucket-cloud`, `bitbucket-server` (Data Center) or
    `local`."""
    url: str = ""
    """GitLab: the instance. GitHub: the REST base, `https://api.github.com` by default
    (GHES: `https://HOST/api/v3`). Bitbucket Cloud: `https://api.bitbucket.org/2.0` by
    default. Bitbucket Data Center: the server's base, `https://HOST[/CONTEXT]`. `local`:
    the directory its repos' paths are under (default `/`)."""
    token_env: VariableName = ""
    """The environment variable holding the token; this or `token_file` is required (not for
    `local`)."""
    token_file: str = ""
    """A file holding the token; a relative path is read from `$CREDENTIALS_DIRECTORY`
    (systemd `LoadCredential=`)."""
    token: Secret = Secret("")
    ca_bundle: str | None = None
    """A PEM bundle for an internal CA; by default the OS trust store."""
    username: str | None = None
    """Overrides the bot's identity, by default read from the host (`GET /user`); Bitbucket
    Cloud with an access token: the token's name (required there)."""
    login: str | None = None
    """Bitbucket Cloud only: the account whose API token (or app password) the secret is,
    for Basic auth; without it the secret is an access token (Bearer)."""
    max_concurrent_requests: Annotated[int, Between(1, 64)] = 4
    """Requests in flight to this host."""
    request_timeout_seconds: Annotated[float, Between(1, 600)] = 30.0
    """One HTTP request."""
    # bench figure 8: a 40 000-note thread is ~32 MB of GitLab JSON, ~250 MB while parsed.
    max_response_mb: Annotated[int, Between(1, 1024)] = 32
    """The largest answer read from the host: a bigger one is refused and its MR skipped,
    with the reason logged, rather than let one MR take all the memory. A thread of 40 000
    notes is about 32 MB of GitLab JSON and takes the daemon about 250 MB while it is
    read."""
    list_strategy: Annotated[str, one_of("auto", "instance", "project")] = "auto"
    """GitLab: `instance` (one listing request for all repos), `project` (one per repo) or
    `auto` (instance, falling back to project where the token may not list it)."""
    # ---- agent tools (docs/DESIGN.md §13) ----
    agent_writes: bool = False
    """`livereview mr` and `livereview mcp` may reply, comment, approve, unapprove and
    request changes on this host; off, a read-only agent cannot approve by accident."""
    agent_repos: Annotated[TomlList[str], AfterValidator(check_patterns)] = ()
    """Repository path patterns the agent tools (`livereview mr`, `livereview mcp`) may
    reach on this host besides its watched `[[repos]]`: `*` and `?` within one path
    segment, `**` across segments (`group/**`); case is ignored where the host ignores it.
    Anything else is refused before a request is made (docs/DESIGN.md §13, "Reach")."""
    tokens: TomlList[TokenSettings] = ()
    """`[[hosts.tokens]]`: GitLab and GitHub only. Where an organisation, group or repository
    gives the bot a token of its own (a GitHub App's installation, a GitLab group or project
    access token), the token for the repos its `repos` patterns match: it acts there under
    its own identity, and lists the MRs of those repos itself (docs/DESIGN.md
    "Identities")."""

    @field_validator("url", mode="after")
    @classmethod
    def _url(cls, url: str, info: ValidationInfo) -> str:
        host_type = info.data.get("type")
        if host_type == "local":  # docs/DESIGN.md §14: the directory its repos' paths are under
            return _local_root(url, info)
        if host_type == "bitbucket-cloud":
            return _bitbucket_cloud_url(url, info)
        if host_type == "bitbucket-server":
            if not url:
                raise Invalid("is required", rank=Rank.MISSING)
            url = http_url(url)
            # The server's base (https://HOST or https://HOST/CONTEXT): the adapter adds
            # /rest/api/1.0 itself, and /rest/comment-likes/latest for reactions.
            if "/rest/" in f"{urlsplit(url).path.rstrip('/')}/":
                raise Invalid("expected the server's base URL (https://HOST, or https://HOST/"
                              f"CONTEXT), without /rest/api/1.0, got {shown(url)}")
            return url
        if host_type != "github":
            if not url:
                raise Invalid("is required", rank=Rank.MISSING)
            return http_url(url)
        url = http_url(url or GITHUB_API)
        # The REST base, not the web UI: api.github.com (api.SUBDOMAIN.ghe.com on GHE.com),
        # or https://HOST/api/v3 on GitHub Enterprise Server. Only an operator's file is held
        # to it: code (the contract tests) points at a fake's bare loopback URL.
        parts = urlsplit(url)
        if reading_of(info) and not parts.path and not (parts.hostname or "").startswith("api."):
            raise Invalid(f"expected the API base, {GITHUB_API} or https://HOST/api/v3 for "
                          f"GitHub Enterprise Server, got {shown(url)}")
        return url

    @field_validator("ca_bundle", mode="after")
    @classmethod
    def _ca_bundle(cls, path: str | None) -> str | None:
        if path and not Path(path).is_file():
            raise Invalid(f"no such file {plain(path)}")
        return path or None

    @field_validator("username", mode="after")
    @classmethod
    def _username(cls, name: str | None) -> str | None:
        return name or None

    @field_validator("login", mode="after")
    @classmethod
    def _login(cls, login: str | None) -> str | None:
        # Basic auth is `login:secret`: a colon or a blank would change who logs in.
        if login is not None and (not login or ":" in login
                                  or any(c.isspace() or not c.isprintable() for c in login)):
            raise Invalid(f"expected an account name or e-mail address, got {shown(login)}")
        return login

    @model_validator(mode="after")
    def _bitbucket_cloud_auth(self) -> Self:
        if self.login is not None and self.type != "bitbucket-cloud":
            raise Invalid("only for type = \"bitbucket-cloud\" (its Basic-auth account)",
                          "login")
        if self.type == "bitbucket-cloud" and self.login is None and not self.username:
            # An access token has no account GET /user could name: its comments are signed
            # by a bot user named after the token.
            raise Invalid("required with an access token (no login): the token's name, "
                          "which Bitbucket shows as the author of what it posts",
                          "username", rank=Rank.MISSING)
        return self

    @model_validator(mode="after")
    def _tokens_where_routed(self) -> Self:
        # Hosts whose adapters a repo-routed client covers (hosts/routed.py).
        if self.tokens and self.type not in ("gitlab", "github"):
            raise Invalid("only for type = \"gitlab\" or \"github\"", "tokens")
        return self

    @model_validator(mode="after")
    def _read_token(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None or self.type == "local":  # git runs locally: no credential
            return self
        token = resolve("token", self.token_env, self.token_file, required=True,
                        both_set=bool(self.token_env), reading=reading)
        return self.model_copy(update={"token": token})


def _local_root(url: str, info: ValidationInfo) -> str:
    """A local host's repos are git working trees under this directory ("/" by default,
    so a repo's path is its absolute path)."""
    root = url or "/"
    if reading_of(info) and not Path(root).is_dir():
        raise Invalid(f"expected a directory the repos' paths are under, got {shown(root)}")
    return root


def _bitbucket_cloud_url(url: str, info: ValidationInfo) -> str:
    """The REST base, https://api.bitbucket.org/2.0, not the web UI. Only an operator's file
    is held to it: code (the contract tests) points at a fake's loopback URL."""
    url = http_url(url or BITBUCKET_CLOUD_API)
    if reading_of(info) and not urlsplit(url).path.endswith("/2.0"):
        raise Invalid(f"expected the API base, {BITBUCKET_CLOUD_API}, got {shown(url)}")
    return url
