"""`livereview.toml` → frozen, validated Settings.

Every problem is reported as one `ConfigError` whose message names the key (`hosts[0].url`)
and the cause, so `livereview check` can print one line and exit 2. Secrets are never in
the file: tokens come from environment variables or files (systemd credentials).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

HOST_TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local")
SUPPORTED_HOST_TYPES = ("gitlab", "github")
GITHUB_API = "https://api.github.com"
T = TypeVar("T")


class ConfigError(Exception):
    """A configuration problem, already phrased for the operator."""


class Secret:
    """A token that never shows itself in repr, str, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@dataclass(frozen=True)
class DaemonSettings:
    database_url: str
    poll_interval_seconds: float = 30.0
    hot_poll_interval_seconds: float = 3.0
    hot_window_seconds: float = 600.0
    metrics_listen: str = "127.0.0.1:9464"
    backfill_hours: float = 24.0
    watermark_overlap_seconds: float = 120.0
    max_concurrent_jobs: int = 4
    max_attempts: int = 6
    retry_base_seconds: float = 5.0
    step_timeout_seconds: float = 120.0
    job_timeout_seconds: float = 600.0
    shutdown_grace_seconds: float = 30.0
    busy_timeout_seconds: float = 10.0
    log_format: str = "auto"  # auto | console | json


@dataclass(frozen=True)
class BotSettings:
    mention_aliases: tuple[str, ...] = ("@livereview",)
    ack_reaction: str = "eyes"
    ignore_users: tuple[str, ...] = ("ghost", "*-bot", "*[bot]")
    max_reply_chars: int = 6000
    max_consecutive_replies: int = 5
    max_replies_per_mr_per_hour: int = 30
    automated_reply_seconds: float = 5.0
    answer_closed_mrs: bool = False


@dataclass(frozen=True)
class AISettings:
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key: Secret = field(default_factory=lambda: Secret(""))
    timeout_seconds: float = 60.0
    max_output_tokens: int = 800
    temperature: float = 0.2


@dataclass(frozen=True)
class HostSettings:
    name: str
    type: str
    url: str
    token: Secret
    ca_bundle: str | None = None
    username: str | None = None  # identity override; else GET /user
    max_concurrent_requests: int = 4
    request_timeout_seconds: float = 30.0
    list_strategy: str = "auto"  # auto | instance | project


@dataclass(frozen=True)
class RepoSettings:
    host: str
    path: str
    # Files of the repo (CONTRIBUTING.md, docs/adr/…), URLs, or (title, text) snippets.
    knowledge: tuple[str | tuple[str, str], ...] = ()


@dataclass(frozen=True)
class LessonsSettings:
    require_approval: bool = True  # a conceded lesson waits for `livereview lessons approve`


@dataclass(frozen=True)
class Settings:
    daemon: DaemonSettings
    bot: BotSettings
    ai: AISettings
    hosts: tuple[HostSettings, ...]
    repos: tuple[RepoSettings, ...]
    lessons: LessonsSettings = field(default_factory=LessonsSettings)
    source: Path | None = None

    def host(self, name: str) -> HostSettings:
        return next(h for h in self.hosts if h.name == name)

    def knowledge(self) -> dict[tuple[str, str], tuple[str | tuple[str, str], ...]]:
        return {(r.host, r.path): r.knowledge for r in self.repos if r.knowledge}

    def repos_of(self, host: str) -> tuple[str, ...]:
        return tuple(r.path for r in self.repos if r.host == host)


class _Table:
    """Reads one TOML table with typed getters; keys outside `allowed` are rejected."""

    def __init__(self, data: Any, where: str, allowed: Iterable[str] | None = None) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: must be a table")
        self.data: dict[str, Any] = data
        self.where = where
        # A misspelt key is reported as such before anything it leaves "missing".
        unknown = sorted(set(data) - set(allowed)) if allowed is not None else []
        if unknown:
            raise ConfigError(f"{self.key(unknown[0])}: unknown key")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str, kind: type[T], default: T) -> T:
        value = self.data.get(name, default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{self.key(name)}: expected {kind.__name__}, got {value!r}")
        return value

    def required(self, name: str) -> str:
        value = self.get(name, str, "")
        if not value:
            raise ConfigError(f"{self.key(name)}: is required")
        return value

    def positive(self, name: str, default: float) -> float:
        value = self.get(name, float, default)
        if value <= 0:
            raise ConfigError(f"{self.key(name)}: must be > 0, got {value}")
        return value

    def count(self, name: str, default: int) -> int:
        value = self.get(name, int, default)
        if value <= 0:
            raise ConfigError(f"{self.key(name)}: must be > 0, got {value}")
        return value

    def strings(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.get(name, list, list(default))
        if not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{self.key(name)}: expected a list of non-empty strings")
        return tuple(value)


def _check_url(key: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{key}: expected an http(s) URL, got {url!r}")
    return url.rstrip("/")


def _secret(table: _Table, env: dict[str, str], kind: str, *, default_env: str = "",
            required: bool) -> Secret:
    """A secret from `<kind>_env` (a variable) or `<kind>_file` (relative paths are read
    from $CREDENTIALS_DIRECTORY, i.e. systemd's LoadCredential=)."""
    env_key, file_key = f"{kind}_env", f"{kind}_file"
    env_name = table.get(env_key, str, default_env)
    file_name = table.get(file_key, str, "")
    if file_name:
        if env_key in table.data:
            raise ConfigError(f"{table.key(file_key)}: set {env_key} or {file_key}, not both")
        path = Path(file_name)
        if not path.is_absolute() and env.get("CREDENTIALS_DIRECTORY"):
            path = Path(env["CREDENTIALS_DIRECTORY"]) / path
        try:
            value = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"{table.key(file_key)}: cannot read {path}: "
                              f"{exc.strerror}") from None
        if not value:
            raise ConfigError(f"{table.key(file_key)}: {path} is empty")
        return Secret(value)
    if env_name:
        value = env.get(env_name, "")
        if not value:
            raise ConfigError(f"{table.key(env_key)}: environment variable {env_name} is "
                              "not set")
        return Secret(value)
    if required:
        raise ConfigError(f"{table.key(env_key)}: is required (or {file_key})")
    return Secret("")


def _default_database_url(env: dict[str, str]) -> str:
    state = env.get("STATE_DIRECTORY") or str(Path.home() / ".local/state/livereview")
    return f"sqlite:///{Path(state) / 'livereview.db'}"


def _daemon(table: _Table, env: dict[str, str]) -> DaemonSettings:
    state_dir = table.get("state_dir", str, "")
    default_db = (f"sqlite:///{Path(state_dir) / 'livereview.db'}" if state_dir
                  else _default_database_url(env))
    database_url = table.get("database_url", str, default_db)
    if not database_url.startswith(("sqlite:", "postgresql")):
        raise ConfigError(f"{table.key('database_url')}: expected sqlite:/// or "
                          f"postgresql+psycopg://, got {database_url!r}")
    log_format = table.get("log_format", str, "auto")
    if log_format not in ("auto", "console", "json"):
        raise ConfigError(f"{table.key('log_format')}: expected auto, console or json")
    listen = table.get("metrics_listen", str, "127.0.0.1:9464")
    if listen and (":" not in listen or not listen.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"{table.key('metrics_listen')}: expected HOST:PORT or \"\", "
                          f"got {listen!r}")
    settings = DaemonSettings(
        database_url=database_url,
        poll_interval_seconds=table.positive("poll_interval_seconds", 30.0),
        hot_poll_interval_seconds=table.positive("hot_poll_interval_seconds", 3.0),
        hot_window_seconds=table.positive("hot_window_seconds", 600.0),
        metrics_listen=listen,
        backfill_hours=table.get("backfill_hours", float, 24.0),
        watermark_overlap_seconds=table.get("watermark_overlap_seconds", float, 120.0),
        max_concurrent_jobs=table.count("max_concurrent_jobs", 4),
        max_attempts=table.count("max_attempts", 6),
        retry_base_seconds=table.positive("retry_base_seconds", 5.0),
        step_timeout_seconds=table.positive("step_timeout_seconds", 120.0),
        job_timeout_seconds=table.positive("job_timeout_seconds", 600.0),
        shutdown_grace_seconds=table.positive("shutdown_grace_seconds", 30.0),
        busy_timeout_seconds=table.positive("busy_timeout_seconds", 10.0),
        log_format=log_format,
    )
    if settings.watermark_overlap_seconds < 60:
        raise ConfigError(f"{table.key('watermark_overlap_seconds')}: must be >= 60 (GitLab "
                          "bumps an MR's updated_at at most once a minute per note)")
    if settings.backfill_hours < 0:
        raise ConfigError(f"{table.key('backfill_hours')}: must be >= 0")
    return settings


def _bot(table: _Table) -> BotSettings:
    aliases = table.strings("mention_aliases", ("@livereview",))
    if not aliases:
        raise ConfigError(f"{table.key('mention_aliases')}: name at least one alias "
                          "(nobody could summon the bot)")
    for alias in aliases:
        if not alias.lstrip("@") or any(c.isspace() for c in alias):
            raise ConfigError(f"{table.key('mention_aliases')}: invalid alias {alias!r}")
    return BotSettings(
        mention_aliases=tuple(a if a.startswith("@") else "@" + a for a in aliases),
        ack_reaction=table.get("ack_reaction", str, "eyes"),
        ignore_users=table.strings("ignore_users", ("ghost", "*-bot", "*[bot]")),
        max_reply_chars=table.count("max_reply_chars", 6000),
        max_consecutive_replies=table.count("max_consecutive_replies", 5),
        max_replies_per_mr_per_hour=table.count("max_replies_per_mr_per_hour", 30),
        automated_reply_seconds=table.get("automated_reply_seconds", float, 5.0),
        answer_closed_mrs=table.get("answer_closed_mrs", bool, False),
    )


def _ai(table: _Table, env: dict[str, str]) -> AISettings:
    api_key = _secret(table, env, "api_key", default_env="OPENAI_API_KEY", required=False)
    return AISettings(
        base_url=_check_url(table.key("base_url"),
                            table.get("base_url", str, "https://api.openai.com/v1")),
        model=table.get("model", str, "gpt-4o-mini"),
        api_key=api_key,
        timeout_seconds=table.positive("timeout_seconds", 60.0),
        max_output_tokens=table.count("max_output_tokens", 800),
        temperature=table.get("temperature", float, 0.2),
    )


def _host_url(table: _Table, host_type: str) -> str:
    if host_type != "github":
        return _check_url(table.key("url"), table.required("url"))
    url = _check_url(table.key("url"), table.get("url", str, GITHUB_API))
    # The REST base, not the web UI: api.github.com (api.SUBDOMAIN.ghe.com on GHE.com), or
    # https://HOST/api/v3 on GitHub Enterprise Server.
    host, path = urlsplit(url).hostname or "", urlsplit(url).path
    if not path and not host.startswith("api."):
        raise ConfigError(f"{table.key('url')}: expected the API base, {GITHUB_API} or "
                          f"https://HOST/api/v3 for GitHub Enterprise Server, got {url!r}")
    return url


def _host(table: _Table, env: dict[str, str]) -> HostSettings:
    host_type = table.required("type")
    if host_type not in HOST_TYPES:
        raise ConfigError(f"{table.key('type')}: expected one of {', '.join(HOST_TYPES)}, "
                          f"got {host_type!r}")
    if host_type not in SUPPORTED_HOST_TYPES:
        raise ConfigError(f"{table.key('type')}: {host_type!r} is not supported by this "
                          f"version yet (supported: {', '.join(SUPPORTED_HOST_TYPES)})")
    ca_bundle = table.get("ca_bundle", str, "") or None
    if ca_bundle and not Path(ca_bundle).is_file():
        raise ConfigError(f"{table.key('ca_bundle')}: no such file {ca_bundle}")
    strategy = table.get("list_strategy", str, "auto")
    if strategy not in ("auto", "instance", "project"):
        raise ConfigError(f"{table.key('list_strategy')}: expected auto, instance or project")
    return HostSettings(
        name=table.required("name"),
        type=host_type,
        url=_host_url(table, host_type),
        token=_secret(table, env, "token", required=True),
        ca_bundle=ca_bundle,
        username=table.get("username", str, "") or None,
        max_concurrent_requests=table.count("max_concurrent_requests", 4),
        request_timeout_seconds=table.positive("request_timeout_seconds", 30.0),
        list_strategy=strategy,
    )


def _keys(cls: type, *extra: str, drop: tuple[str, ...] = ()) -> set[str]:
    return {f.name for f in fields(cls)} - set(drop) | set(extra)


SECTION_KEYS = {
    "daemon": _keys(DaemonSettings, "state_dir"),
    "bot": _keys(BotSettings),
    "ai": _keys(AISettings, "api_key_env", "api_key_file", drop=("api_key",)),
    "lessons": _keys(LessonsSettings),
}
HOST_KEYS = _keys(HostSettings, "token_env", "token_file", drop=("token",))
REPO_KEYS = _keys(RepoSettings)


def _knowledge(table: _Table) -> tuple[str | tuple[str, str], ...]:
    """Paths and URLs as strings; snippets as inline tables {title = "…", text = "…"}."""
    entries: list[str | tuple[str, str]] = []
    for index, item in enumerate(table.get("knowledge", list, [])):
        where = f"{table.key('knowledge')}[{index}]"
        if isinstance(item, str) and item.strip():
            entries.append(item.strip())
        elif isinstance(item, dict) and set(item) == {"title", "text"} and all(
                isinstance(v, str) and v.strip() for v in item.values()):
            entries.append((item["title"].strip(), item["text"]))
        else:
            raise ConfigError(f"{where}: expected a repo path, a URL, or "
                              '{ title = "…", text = "…" }')
    return tuple(entries)


def parse(data: dict[str, Any], env: dict[str, str], source: Path | None = None) -> Settings:
    root = _Table(data, "", allowed=(*SECTION_KEYS, "hosts", "repos"))
    sections = {name: _Table(root.get(name, dict, {}), name, allowed)
                for name, allowed in SECTION_KEYS.items()}
    hosts_raw = root.get("hosts", list, [])
    repos_raw = root.get("repos", list, [])
    hosts = tuple(_host(_Table(h, f"hosts[{i}]", HOST_KEYS), env)
                  for i, h in enumerate(hosts_raw))
    if not hosts:
        raise ConfigError("hosts: at least one [[hosts]] table is required")
    names = [h.name for h in hosts]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ConfigError(f"hosts[{i}].name: duplicate host name {name!r}")
    repos: list[RepoSettings] = []
    for i, raw in enumerate(repos_raw):
        table = _Table(raw, f"repos[{i}]", REPO_KEYS)
        repo = RepoSettings(host=table.required("host"), path=table.required("path").strip("/"),
                            knowledge=_knowledge(table))
        if repo.host not in names:
            raise ConfigError(f"repos[{i}].host: no [[hosts]] named {repo.host!r}")
        if repo in repos:
            raise ConfigError(f"repos[{i}].path: {repo.path!r} is listed twice")
        repos.append(repo)
    if not repos:
        raise ConfigError("repos: at least one [[repos]] table is required")
    return Settings(
        daemon=_daemon(sections["daemon"], env),
        bot=_bot(sections["bot"]),
        ai=_ai(sections["ai"], env),
        hosts=hosts,
        repos=tuple(repos),
        lessons=LessonsSettings(
            require_approval=sections["lessons"].get("require_approval", bool, True)),
        source=source,
    )


def load(path: Path, env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ) if env is None else env
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (create one with `livereview init`)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return parse(data, env, path)
