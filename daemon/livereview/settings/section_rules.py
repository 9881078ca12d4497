"""The rules of `[daemon]`, `[bot]`, `[ai]`, `[answers]`, `[review]`, `[web]`, `[[repos]]` and of
the file as a whole that need no pydantic. The settings models' validators call these, and so
does the light reader (settings/light.py): one rule, one place (docs/getting-started.md, "A
CLI for loops")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from livereview.settings.checks import http_url
from livereview.settings.errors import Invalid, Rank, shown
from livereview.settings.secret import Reading, Secret, resolve

REVIEW_EVENTS = ("opened", "push")
SEVERITIES = ("critical", "warning", "suggestion")
VERDICTS = ("approved", "changes_requested", "commented")
MIN_TOKEN_CHARS = 16  # a sign-in token is guessed online: short ones are refused
_HEADER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


# ---- [daemon] ----
def replica_name(name: str) -> str:
    if len(name) > 64 or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in name):
        raise Invalid(f"expected up to 64 letters, digits, '-', '_' or '.', got {shown(name)}")
    return name


def metrics_listen(listen: str) -> str:
    host, _, port = listen.rpartition(":")
    if listen and not (host and port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise Invalid(f'expected HOST:PORT (port 1 to 65535) or "", got {shown(listen)}')
    return listen


def default_database_url(state_dir: str | None, env: Mapping[str, str]) -> str:
    """`livereview.db` in `state_dir`, else in `$STATE_DIRECTORY`, else in
    `~/.local/state/livereview`."""
    state = state_dir or env.get("STATE_DIRECTORY") or str(Path.home() / ".local/state/livereview")
    return f"sqlite:///{Path(state) / 'livereview.db'}"


def daemon_consistent(*, hot: float, poll: float, job: float, step: float) -> None:
    if hot > poll:
        raise Invalid(f"must be <= poll_interval_seconds ({poll:g}), got {hot:g}",
                      "hot_poll_interval_seconds")
    if job < step:
        raise Invalid(f"must be >= step_timeout_seconds ({step:g}), got {job:g}",
                      "job_timeout_seconds")


# ---- [bot] ----
def aliases(values: tuple[str, ...]) -> tuple[str, ...]:
    if not values:
        raise Invalid("name at least one alias (nobody could summon the bot)")
    for alias in values:
        if not alias.lstrip("@") or any(c.isspace() for c in alias) or len(alias) > 100:
            raise Invalid(f"invalid alias {shown(alias)}")
    return tuple(a if a.startswith("@") else "@" + a for a in values)


# ---- [ai] ----
def ai_key(env_name: str, file_name: str, *, env_written: bool, reading: Reading) -> Secret:
    """The model's API key: from `api_key_file`, or the variable `api_key_env` names (by
    default OPENAI_API_KEY: a default name does not clash with a file)."""
    return resolve("api_key", env_name, file_name, required=False,
                   both_set=env_written and bool(env_name), reading=reading)


# ---- [answers] ----
def languages(values: tuple[str, ...]) -> tuple[str, ...]:
    for language in values:
        if not language.strip() or len(language) > 40 or not language.isprintable():
            raise Invalid(f"expected language names such as \"English\", got {shown(language)}")
    return values


# ---- [review] (docs/DESIGN.md §11) ----
def severities(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if value not in SEVERITIES:
            raise Invalid(f"expected some of {', '.join(SEVERITIES)}, got {shown(value)}")
    return values


def verdicts(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if value not in VERDICTS:
            raise Invalid(f"expected some of {', '.join(VERDICTS)}, got {shown(value)}")
    return values


def http_or_none(url: str) -> str:
    """No URL (empty), or an http(s) URL kept as written (a hook may need its trailing /)."""
    if url:
        http_url(url)
    return url


# ---- [web] (DESIGN §11 "The web face") ----
def header_name(value: str) -> str:
    if value and not _HEADER.fullmatch(value):
        raise Invalid(f"{value!r} is not an HTTP header name")
    return value


def usable_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS:
        raise Invalid(f"the token in {where} must be at least {MIN_TOKEN_CHARS} characters",
                      "token_file")
    return token


def web_token(token_file: str, reading: Reading) -> Secret:
    """The token a browser signs in with, from `token_file` (none without one); a short one is
    refused."""
    token = resolve("token", "", token_file, both_set=False, required=False, reading=reading)
    if token:
        usable_token(token.reveal(), token_file)
    return token


# ---- [[repos]] ----
def repo_path(path: str) -> str:
    if not path.strip("/").strip():
        raise Invalid("is required", rank=Rank.MISSING)
    return path.strip("/")


def review_events(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if value not in REVIEW_EVENTS:
            raise Invalid(f"expected some of {', '.join(REVIEW_EVENTS)}, got {shown(value)}")
    return values


# ---- the file as a whole ----
def at_least_one(kind: str, values: tuple[object, ...]) -> None:
    if not values:
        raise Invalid(f"at least one [[{kind}]] table is required", rank=Rank.MISSING)


def references(hosts: Iterable[str], repos: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Host names are unique, each repo names one and is listed once; the names."""
    names: set[str] = set()
    for index, host in enumerate(hosts):
        if host in names:
            raise Invalid(f"duplicate host name {shown(host)}", "hosts", index, "name")
        names.add(host)
    seen: set[tuple[str, str]] = set()
    for index, (host, path) in enumerate(repos):
        if host not in names:
            raise Invalid(f"no [[hosts]] named {shown(host)}", "repos", index, "host")
        if (host, path) in seen:
            raise Invalid(f"{shown(path)} is listed twice", "repos", index, "path")
        seen.add((host, path))
    return frozenset(names)
