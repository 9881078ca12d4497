"""The config as `livereview mr` needs it, read without pydantic when that is provably what
the models would make of it (docs/getting-started.md, "A CLI for loops").

`parse` returns the settings, or None whenever it cannot prove that the models accept the
file and make the same values of it: a section or key it does not know (settings/
light_sections.py), a value of another TOML type, a rule broken. It never reports an error:
on None the caller reads the file with the models, which say what is wrong, in their words,
with their exit code. So it may be stricter than the models, never looser; every rule it
applies is the models' own function (settings/checks.py, host_rules.py, section_rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, TypeVar

from livereview.settings import host_rules, section_rules
from livereview.settings.checks import database_url
from livereview.settings.errors import Invalid
from livereview.settings.light_keys import SPEC, Spec, Unproven
from livereview.settings.light_sections import (
    LightAI,
    LightAnswers,
    LightBot,
    LightDaemon,
    LightHost,
    LightLessons,
    LightRepo,
    LightReview,
    LightToken,
    LightWeb,
)
from livereview.settings.secret import Reading, Secret, resolve, secret_path
from livereview.settings.view import ToolSettings, secrets_of

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

S = TypeVar("S", bound="DataclassInstance")


@dataclass(frozen=True)
class LightSettings:
    """What the models would hold for these sections (the rest of the file is their
    defaults); satisfies `settings.view.ToolSettings`, as `Settings` does."""

    hosts: tuple[LightHost, ...]
    repos: tuple[LightRepo, ...]
    daemon: LightDaemon
    bot: LightBot
    ai: LightAI
    lessons: LightLessons
    answers: LightAnswers
    review: LightReview
    web: LightWeb

    def repos_of(self, host: str) -> tuple[str, ...]:
        return tuple(r.path for r in self.repos if r.host == host)

    def secrets(self) -> tuple[str, ...]:
        """What the log must never show, as `Settings.secrets` lists it."""
        return secrets_of(self.hosts, self.ai.api_key, self.web.token)


if TYPE_CHECKING:
    def _tools_take_it(light: LightSettings) -> ToolSettings:  # checked by mypy only
        return light


def spec(of: object) -> Spec:
    found = getattr(of, "metadata", {}).get(SPEC)
    if not isinstance(found, Spec):
        raise TypeError(f"{of!r} is not a light key")
    return found


def section(cls: type[S], data: object) -> S:
    """A table read key by key: defaults go through the rules too, as the models validate
    theirs; an unknown key, a derived one or a missing required one is not proven."""
    if not isinstance(data, dict):
        raise Unproven
    specs = {f.name: (f, spec(f)) for f in fields(cls)}
    if any(name not in specs or specs[name][1].derived for name in data):
        raise Unproven
    values: dict[str, object] = {}
    for name, (f, key) in specs.items():
        if key.derived:
            continue
        if name in data:
            values[name] = key.check(data[name])
        elif key.required:
            raise Unproven
        else:
            values[name] = key.check(f.default)
    return cls(**values)


def _tables(data: object) -> list[object]:
    if not isinstance(data, list):
        raise Unproven
    return data


def _token(data: object, reading: Reading) -> LightToken:
    table = section(LightToken, data)
    token = resolve("token", table.token_env, table.token_file, required=True,
                    both_set=bool(table.token_env), reading=reading)
    return replace(table, token=token)


def _host(data: object, reading: Reading) -> LightHost:
    if not isinstance(data, dict):
        raise Unproven
    raw = dict(data)
    tables = raw.pop("tokens", [])  # `[[hosts.tokens]]`: each read with its secret
    host = section(LightHost, raw)
    tokens = tuple(_token(t, reading) for t in _tables(tables))
    url = host_rules.host_url(host.type, host.url, from_file=True)
    host_rules.bitbucket_cloud_auth(host.type, host.login, host.username)
    host_rules.tokens_where_routed(host.type, len(tokens))
    token = Secret("")
    if host_rules.needs_token(host.type):
        token = resolve("token", host.token_env, host.token_file, required=True,
                        both_set=bool(host.token_env), reading=reading)
    return replace(host, url=url, token=token, tokens=tokens)


def _daemon(data: object, env: Mapping[str, str]) -> LightDaemon:
    daemon = section(LightDaemon, data)
    url = database_url(daemon.database_url) if daemon.database_url else \
        section_rules.default_database_url(daemon.state_dir, env)
    section_rules.daemon_consistent(
        hot=daemon.hot_poll_interval_seconds, poll=daemon.poll_interval_seconds,
        job=daemon.job_timeout_seconds, step=daemon.step_timeout_seconds)
    return replace(daemon, database_url=url)


def _ai(data: object, reading: Reading) -> LightAI:
    ai = section(LightAI, data)
    key = section_rules.ai_key(ai.api_key_env, ai.api_key_file, reading=reading,
                               env_written=isinstance(data, dict) and "api_key_env" in data)
    return replace(ai, api_key=key)


def _web(data: object, reading: Reading) -> LightWeb:
    web = section(LightWeb, data)
    return replace(web, token=section_rules.web_token(web.token_file, reading))


KNOWN = frozenset({"hosts", "repos", "daemon", "bot", "ai", "lessons", "answers", "review",
                   "web"})


def _settings(data: Mapping[str, object], env: Mapping[str, str]) -> LightSettings:
    # As the models do (settings/loading.py): every other rule first, reading no secret —
    # a secret readable once (a pipe) is then read only if the file is this reader's.
    first = _read(data, env, Reading(env, secrets=False))
    # A secret file that is not a regular file (a pipe, /dev/fd/N) is read once: if a later
    # secret then failed, the models would find it empty and say the wrong thing.
    named = [h.token_file for h in first.hosts] + [first.ai.api_key_file, first.web.token_file]
    named += [t.token_file for h in first.hosts for t in h.tokens]
    if not all(secret_path(name, env).is_file() for name in named if name):
        raise Unproven
    return _read(data, env, Reading(env, secrets=True))


def _read(data: Mapping[str, object], env: Mapping[str, str], reading: Reading
          ) -> LightSettings:
    if not KNOWN.issuperset(data):
        raise Unproven
    hosts = tuple(_host(h, reading) for h in _tables(data.get("hosts", [])))
    repos = tuple(section(LightRepo, r) for r in _tables(data.get("repos", [])))
    section_rules.at_least_one("hosts", hosts)
    section_rules.at_least_one("repos", repos)
    section_rules.references((h.name for h in hosts), ((r.host, r.path) for r in repos))
    return LightSettings(
        hosts, repos, _daemon(data.get("daemon", {}), env), section(LightBot, data.get("bot", {})),
        _ai(data.get("ai", {}), reading), section(LightLessons, data.get("lessons", {})),
        section(LightAnswers, data.get("answers", {})),
        section(LightReview, data.get("review", {})), _web(data.get("web", {}), reading))


def parse(data: Mapping[str, object], env: Mapping[str, str]) -> LightSettings | None:
    """The settings of a TOML document with every secret read, if the models would make
    exactly these of it; else None (and the models read it)."""
    try:
        return _settings(data, env)
    except (Unproven, Invalid):
        return None
    except (ValueError, OverflowError, OSError):  # what a rule met but did not foresee:
        return None  # the models read the file, and say what is wrong in their words
