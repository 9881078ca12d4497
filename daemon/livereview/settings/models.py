"""The settings, one frozen pydantic model per TOML section: each default and bound is written
once, on its field. Keys outside a model are refused (`extra="forbid"`), values are checked
strictly (a boolean is not a number, `6.0` is not a count), and every number has a lower and
an upper bound an operator would find sensible.

A model validated with a `Reading` context is being read from a file: the keys it derives
(`token`, `api_key`, `source`) may not be written there, and its secrets are resolved from the
environment. Built in code (tests, the demo), a model takes what it is given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    ValidationInfo,
    field_validator,
    model_validator,
)

from livereview.settings.answering import (
    AnswerSettings,
    KnowledgeEntries,
    KnowledgeSettings,
    LessonsSettings,
    ReviewSettings,
    repo_path,
    review_events,
)
from livereview.settings.errors import Invalid, Rank, plain, shown
from livereview.settings.repo_globs import check_patterns
from livereview.settings.rules import (
    Between,
    HttpUrl,
    Required,
    TomlList,
    at_most,
    database_url,
    http_url,
    one_of,
)
from livereview.settings.secret import Secret, resolve, variable_name
from livereview.settings.section import Section, reading_of
from livereview.settings.web import WebSettings

HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
SUPPORTED_HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
GITHUB_API = "https://api.github.com"
BITBUCKET_CLOUD_API = "https://api.bitbucket.org/2.0"
# Where each type's URL may be left out.
DEFAULT_URLS = {"github": GITHUB_API, "bitbucket-cloud": BITBUCKET_CLOUD_API}
SECONDS_PER_DAY = 86_400.0

VariableName = Annotated[str, AfterValidator(variable_name)]


def _replica_name(name: str) -> str:
    if len(name) > 64 or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in name):
        raise Invalid(f"expected up to 64 letters, digits, '-', '_' or '.', got {shown(name)}")
    return name


class DaemonSettings(Section):
    state_dir: str = ""
    """Shorthand for a SQLite database: the file `livereview.db` goes in this directory."""
    database_url: str = ""
    """`sqlite:///PATH` (WAL) or `postgresql+psycopg://USER@HOST/DB` (install `.[postgres]`);
    "" → `livereview.db` in `state_dir`, else in `$STATE_DIRECTORY`, else in
    `~/.local/state/livereview`."""
    poll_interval_seconds: Annotated[float, Between(1, SECONDS_PER_DAY)] = 30.0
    """The cold cycle: per-project listing (where used), re-checking failing repos."""
    hot_poll_interval_seconds: Annotated[float, Between(0.1, 3600)] = 3.0
    """The hot cycle: the listing and the hot MRs; at most `poll_interval_seconds`."""
    hot_window_seconds: Annotated[float, Between(10, SECONDS_PER_DAY)] = 600.0
    """An MR with human activity this recent is hot (fetched every hot cycle)."""
    active_poll_interval_seconds: Annotated[float, Between(0.1, 3600)] = 1.0
    """The active tier, on hosts that can tell cheaply whether an MR changed (GitHub: one
    conditional request, a 304 costing no rate limit): an MR with human activity within
    `active_window_seconds` is looked at this often between hot cycles, and read when it
    changed. At or above `hot_poll_interval_seconds` there is no active tier."""
    active_window_seconds: Annotated[float, Between(10, SECONDS_PER_DAY)] = 180.0
    """An MR with human activity this recent is active (see `active_poll_interval_seconds`);
    idle longer, it goes back to the hot cycle's pace."""
    max_active_mrs: Annotated[int, Between(0, 100)] = 5
    """At most this many MRs of a host are active at once, the most recently active first:
    the tier costs at most this many requests per active interval (5 a second: 300 a
    minute, a third of GitHub's secondary limit of 900 points a minute per endpoint); 0
    turns it off."""
    quiet_repo_interval_seconds: Annotated[float, Between(1, SECONDS_PER_DAY)] = 60.0
    """Hosts that list each repo with a request of its own (Bitbucket): a repo without an MR
    hot is listed this often; the bot's dashboard, where the host has one, is read within
    the same budget. Idle cost at most 120 / this requests per repo per minute; a mention on
    a quiet repo is seen within this long (one below `hot_poll_interval_seconds` lists every
    repo every cycle)."""
    metrics_listen: str = "127.0.0.1:9464"
    """`HOST:PORT` of the Prometheus endpoint (`/metrics`); "" disables it."""
    backfill_hours: Annotated[float, Between(0, 720)] = 24.0
    """On the first sight of a repo, comments older than this are never answered."""
    watermark_overlap_seconds: Annotated[float, Between(60, 3600, why=(
        "GitLab bumps an MR's updated_at at most once a minute per note"))] = 120.0
    """How far each listing reaches back before the watermark."""
    max_concurrent_jobs: Annotated[int, Between(1, 64)] = 4
    """Reply jobs in flight at once."""
    max_attempts: Annotated[int, Between(1, 50)] = 6
    """A reply job's tries (delays doubling, jittered, at most 15 min) before it fails
    visibly."""
    retry_base_seconds: Annotated[float, Between(0.01, 900)] = 5.0
    """The first retry's delay."""
    step_timeout_seconds: Annotated[float, Between(1, 3600)] = 120.0
    """Soft limit of one step of a job (ack, model call, post)."""
    job_timeout_seconds: Annotated[float, Between(1, 7200)] = 600.0
    """Hard limit of one job; at least `step_timeout_seconds`."""
    shutdown_grace_seconds: Annotated[float, Between(1, 40)] = 30.0
    """On SIGTERM, the time the running cycle and in-flight replies get to finish; below
    the systemd unit's `TimeoutStopSec=45`, which kills a daemon that takes longer."""
    busy_timeout_seconds: Annotated[float, Between(0.1, 300)] = 10.0
    """SQLite: wait this long for a lock, then fail with one line rather than hang."""
    log_format: Annotated[str, one_of("auto", "console", "json")] = "auto"
    """`auto`: readable lines on a terminal or journald, JSON lines otherwise."""
    # -- several daemons on one PostgreSQL database (docs/DESIGN.md §12; ignored on SQLite) --
    replica: Annotated[str, AfterValidator(_replica_name)] = ""
    """Replicas on PostgreSQL: this daemon's name (up to 64 letters, digits, `-`, `_`, `.`),
    the `replica` label of every metric; "" → no label."""
    lease_seconds: Annotated[float, Between(1, 600)] = 30.0
    """Replicas on PostgreSQL: a dead replica's polls and reply jobs pass to another after
    this long."""

    @field_validator("database_url", mode="after")
    @classmethod
    def _database_url(cls, url: str, info: ValidationInfo) -> str:
        if not url:
            reading = reading_of(info)
            env = reading.env if reading else os.environ
            state = (info.data.get("state_dir") or env.get("STATE_DIRECTORY")
                     or str(Path.home() / ".local/state/livereview"))
            return f"sqlite:///{Path(state) / 'livereview.db'}"
        return database_url(url)

    @field_validator("metrics_listen", mode="after")
    @classmethod
    def _metrics_listen(cls, listen: str) -> str:
        host, _, port = listen.rpartition(":")
        if listen and not (host and port.isascii() and port.isdigit()
                           and 1 <= int(port) <= 65535):
            raise Invalid(f'expected HOST:PORT (port 1 to 65535) or "", got {shown(listen)}')
        return listen

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.hot_poll_interval_seconds > self.poll_interval_seconds:
            raise Invalid("must be <= poll_interval_seconds "
                          f"({self.poll_interval_seconds:g}), got "
                          f"{self.hot_poll_interval_seconds:g}", "hot_poll_interval_seconds")
        if self.job_timeout_seconds < self.step_timeout_seconds:
            raise Invalid("must be >= step_timeout_seconds "
                          f"({self.step_timeout_seconds:g}), got {self.job_timeout_seconds:g}",
                          "job_timeout_seconds")
        return self


def _aliases(aliases: tuple[str, ...]) -> tuple[str, ...]:
    if not aliases:
        raise Invalid("name at least one alias (nobody could summon the bot)")
    for alias in aliases:
        if not alias.lstrip("@") or any(c.isspace() for c in alias) or len(alias) > 100:
            raise Invalid(f"invalid alias {shown(alias)}")
    return tuple(a if a.startswith("@") else "@" + a for a in aliases)


def _non_empty(values: tuple[str, ...]) -> tuple[str, ...]:
    if not all(values):
        raise Invalid("expected a list of non-empty strings")
    return values


class BotSettings(Section):
    mention_aliases: Annotated[TomlList[str], AfterValidator(_aliases)] = ("@livereview",)
    """The mentions that summon the bot: case-insensitive, word-bounded, only in prose (not
    in code, links or quotes)."""
    ack_reaction: Annotated[Required, at_most(64)] | None = None
    """The reaction the bot acknowledges a comment with. Unset, each host's own: `eyes` (👀)
    on GitLab and GitHub, `thinking_face` (🤔) on Bitbucket Data Center, whose picker has no
    👀. A name the host does not offer (GitHub's eight, Data Center's five) is acked with
    `ack_comment` instead; `livereview check` says which it will be."""
    ack_comment: Annotated[Required, at_most(200)] = "👀 Looking into this…"
    """The short reply that acknowledges a comment where no reaction can: the host has none
    (Bitbucket Cloud, Bitbucket Data Center before 7), refuses `ack_reaction`, or the bot
    may not react there. It stays, and the answer follows as its own reply (which notifies
    the asker)."""
    ignore_users: Annotated[TomlList[str], AfterValidator(_non_empty)] = (
        "ghost", "*-bot", "*[bot]")
    """Glob patterns of users never answered (their replies are not a human's either)."""
    max_reply_chars: Annotated[int, Between(100, 60_000)] = 6000  # GitHub's cap is 65 536
    """A longer answer is cut, with a note."""
    max_consecutive_replies: Annotated[int, Between(1, 100)] = 5
    """Loop guard: bot replies in a thread without a human in between."""
    max_exchange_replies: Annotated[int, Between(1, 100)] = 10
    """Loop guard: bot replies in a thread to one counterpart while nobody else writes,
    whatever the timing."""
    max_replies_per_thread_per_hour: Annotated[int, Between(1, 1000)] = 12
    """Loop guard: bot replies in one thread in an hour, whoever asks (two bots taking turns
    look like a conversation)."""
    max_replies_per_mr_per_hour: Annotated[int, Between(1, 10_000)] = 30
    """Reply budget per MR."""
    automated_reply_seconds: Annotated[float, Between(0, 600)] = 5.0
    """An answer to the bot faster than this is not a human's."""
    answer_closed_mrs: bool = False
    """Still answer when the MR was merged or closed meanwhile."""
    max_edit_answers: Annotated[int, Between(0, 100)] = 3
    """New answers one question gets when its author edits it to ask something new after
    the bot answered (each marked "Answering the edited question:"); cosmetic edits —
    whitespace, case, punctuation, a typo — get none. 0: edits are never answered again.
    Edits past the cap are counted in `livereview_edit_answers_capped_total`."""


class AISettings(Section):
    derived: ClassVar[dict[str, str]] = {"api_key": "set api_key_env or api_key_file"}
    base_url: HttpUrl = "https://api.openai.com/v1"
    """Any OpenAI-compatible server (OpenAI, vLLM, Ollama, …)."""
    model: Required = "gpt-4o-mini"
    """The model name the endpoint knows."""
    api_key_env: VariableName = "OPENAI_API_KEY"
    """The environment variable holding the API key; "" for a server that needs no key (a
    named variable that is unset is an error)."""
    api_key_file: str = ""
    """Instead of `api_key_env`: a file holding the key; a relative path is read from
    `$CREDENTIALS_DIRECTORY` (systemd credentials)."""
    api_key: Secret = Secret("")
    timeout_seconds: Annotated[float, Between(1, 3600)] = 60.0
    """One model call."""
    max_output_tokens: Annotated[int, Between(16, 65_536)] = 800
    """The most tokens one answer may have."""
    temperature: Annotated[float, Between(0, 2)] = 0.2
    """The sampling temperature."""

    @model_validator(mode="after")
    def _read_key(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None:
            return self
        key = resolve("api_key", self.api_key_env, self.api_key_file, required=False,
                      both_set="api_key_env" in self.model_fields_set and bool(self.api_key_env),
                      reading=reading)
        return self.model_copy(update={"api_key": key})


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


class RepoSettings(Section):
    host: Required
    """The `[[hosts]]` entry (by name) the repo is on."""
    path: Annotated[str, AfterValidator(repo_path)]
    """GitLab: `group/subgroup/project`; GitHub: `owner/name`; Bitbucket Cloud:
    `workspace/repository`; Bitbucket Data Center: `PROJECT_KEY/repo-slug`; `local`: a git
    working tree."""
    knowledge: KnowledgeEntries = ()
    """Repo files and globs (`docs/adr/*.md`, read from the target branch), links, and
    `{ title, text }` snippets the answers may cite."""
    answers: AnswerSettings | None = None
    """This repo's `[answers]` keys, over the global ones (`answers = { tone = "thorough" }`)."""
    review_on: Annotated[TomlList[str], AfterValidator(review_events)] = ()
    """`"opened"`: review new MRs; `"push"`: a follow-up review after each push. None by
    default."""


def _at_least_one(kind: str) -> AfterValidator:
    def check(values: tuple[object, ...]) -> tuple[object, ...]:
        if not values:
            raise Invalid(f"at least one [[{kind}]] table is required", rank=Rank.MISSING)
        return values

    return AfterValidator(check)


SECTIONS = ("daemon", "bot", "ai", "lessons", "answers", "knowledge", "review", "web")


class Settings(Section):
    derived: ClassVar[dict[str, str]] = {"source": "the file's own path is not a setting"}
    # Validated, and so reported, in this order: what to watch first, then how.
    hosts: Annotated[TomlList[HostSettings], _at_least_one("hosts")]
    repos: Annotated[TomlList[RepoSettings], _at_least_one("repos")]
    daemon: DaemonSettings
    bot: BotSettings
    ai: AISettings
    lessons: LessonsSettings = LessonsSettings()
    answers: AnswerSettings = AnswerSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    review: ReviewSettings = ReviewSettings()
    web: WebSettings = WebSettings()
    source: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _sections_default(cls, data: object, info: ValidationInfo) -> object:
        # A section left out of the file still gets read, with the file's context: its
        # defaults may come from the environment (STATE_DIRECTORY, OPENAI_API_KEY).
        if reading_of(info) and isinstance(data, dict):
            return {**{name: {} for name in SECTIONS}, "hosts": [], "repos": [], **data}
        return data

    @model_validator(mode="after")
    def _references(self) -> Self:
        names: set[str] = set()
        for index, host in enumerate(self.hosts):
            if host.name in names:
                raise Invalid(f"duplicate host name {shown(host.name)}", "hosts", index, "name")
            names.add(host.name)
        seen: set[tuple[str, str]] = set()
        for index, repo in enumerate(self.repos):
            if repo.host not in names:
                raise Invalid(f"no [[hosts]] named {shown(repo.host)}", "repos", index, "host")
            if (repo.host, repo.path) in seen:
                raise Invalid(f"{shown(repo.path)} is listed twice", "repos", index, "path")
            seen.add((repo.host, repo.path))
        for index, group in enumerate(self.knowledge.groups):
            if group.host not in names:
                raise Invalid(f"no [[hosts]] named {shown(group.host)}", "knowledge", "groups",
                              index, "host")
        return self

    def host(self, name: str) -> HostSettings:
        return next(h for h in self.hosts if h.name == name)

    def knowledge_sources(self) -> dict[str, tuple[str | tuple[str, str], ...]]:
        """Knowledge entries by scope, as lessons name scopes: `repo:HOST:PATH`,
        `group:HOST:PATH`, `global`."""
        scoped = {f"repo:{r.host}:{r.path}": r.knowledge for r in self.repos if r.knowledge}
        for group in self.knowledge.groups:
            key = f"group:{group.host}:{group.path}"
            scoped[key] = (*scoped.get(key, ()), *group.entries)
        if self.knowledge.everywhere:
            scoped["global"] = self.knowledge.everywhere
        return scoped

    def answers_for(self, host: str, repo: str) -> AnswerSettings:
        """[answers] with the repo's own [repos.answers] keys over it."""
        own = next((r.answers for r in self.repos if r.host == host and r.path == repo), None)
        if own is None:
            return self.answers
        return self.answers.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})

    def repos_of(self, host: str) -> tuple[str, ...]:
        return tuple(r.path for r in self.repos if r.host == host)
