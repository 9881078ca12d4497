"""The `[[hosts]]` sections: each host's type, URL, token (or tokens per group, org or repo)
and what its requests may cost (docs/configuration.md; one page per host in docs/)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Self

from pydantic import AfterValidator, ValidationInfo, field_validator, model_validator

from livereview.settings import host_rules
from livereview.settings.host_rules import (
    BITBUCKET_CLOUD_API,
    DEFAULT_URLS,
    GITHUB_API,
    HOST_TYPES,
    SUPPORTED_HOST_TYPES,
)
from livereview.settings.repo_globs import check_patterns
from livereview.settings.rules import (
    Between,
    Required,
    TomlList,
    one_of,
)
from livereview.settings.secret import Secret, resolve, variable_name
from livereview.settings.section import Section, reading_of

__all__ = ["BITBUCKET_CLOUD_API", "DEFAULT_URLS", "GITHUB_API", "HOST_TYPES",
           "SUPPORTED_HOST_TYPES", "HostSettings", "TokenSettings", "VariableName"]

VariableName = Annotated[str, AfterValidator(variable_name)]


class TokenSettings(Section):
    """One `[[hosts.tokens]]` table: the token that acts in the repos its patterns match
    (docs/DESIGN.md "Identities")."""

    derived: ClassVar[dict[str, str]] = {"token": "set token_env or token_file"}
    repos: Annotated[TomlList[str], AfterValidator(host_rules.token_patterns)]
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
    type: Annotated[Required, AfterValidator(host_rules.host_type)]
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
        return host_rules.host_url(info.data.get("type"), url,
                                   from_file=reading_of(info) is not None)

    @field_validator("ca_bundle", mode="after")
    @classmethod
    def _ca_bundle(cls, path: str | None) -> str | None:
        return host_rules.ca_bundle(path)

    @field_validator("username", mode="after")
    @classmethod
    def _username(cls, name: str | None) -> str | None:
        return host_rules.username(name)

    @field_validator("login", mode="after")
    @classmethod
    def _login(cls, login: str | None) -> str | None:
        return host_rules.login(login)

    @model_validator(mode="after")
    def _bitbucket_cloud_auth(self) -> Self:
        host_rules.bitbucket_cloud_auth(self.type, self.login, self.username)
        return self

    @model_validator(mode="after")
    def _tokens_where_routed(self) -> Self:
        host_rules.tokens_where_routed(self.type, len(self.tokens))
        return self

    @model_validator(mode="after")
    def _read_token(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None or not host_rules.needs_token(self.type):
            return self
        token = resolve("token", self.token_env, self.token_file, required=True,
                        both_set=bool(self.token_env), reading=reading)
        return self.model_copy(update={"token": token})

