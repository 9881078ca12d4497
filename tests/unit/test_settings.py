"""Settings: secrets from env or files (systemd credentials), defaults, precise errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from livereview.settings import ConfigError, Secret, load, parse

HOST = {"name": "gl", "type": "gitlab", "url": "https://gitlab.example"}
REPO = {"host": "gl", "path": "a/b"}


def config(host: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    return {"hosts": [{**HOST, **(host or {"token_env": "T"})}], "repos": [REPO], **sections}


def test_token_file_is_read_from_the_credentials_directory(tmp_path: Path) -> None:
    (tmp_path / "gitlab-token").write_text("glpat-from-credential\n")
    (tmp_path / "openai-key").write_text("sk-from-credential")
    settings = parse(config({"token_file": "gitlab-token"}, ai={"api_key_file": "openai-key"}),
                     {"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert settings.hosts[0].token.reveal() == "glpat-from-credential"
    assert settings.ai.api_key.reveal() == "sk-from-credential"


def test_defaults_follow_systemd_state_directory() -> None:
    settings = parse(config(), {"T": "x", "OPENAI_API_KEY": "k", "STATE_DIRECTORY": "/srv/lr"})
    assert settings.daemon.database_url == "sqlite:////srv/lr/livereview.db"
    assert settings.daemon.hot_poll_interval_seconds == 3
    assert settings.bot.mention_aliases == ("@livereview",)


@pytest.mark.parametrize(("data", "env", "message"), [
    (config(), {"T": "x"}, "ai.api_key_env: environment variable OPENAI_API_KEY is not set"),
    (config({"token_env": "T", "token_file": "/nope"}), {"T": "x"},
     "hosts[0].token_file: set token_env or token_file, not both"),
    (config({"token_file": "/nonexistent/token"}), {"OPENAI_API_KEY": "k"},
     "hosts[0].token_file: cannot read /nonexistent/token: No such file or directory"),
    (config({"username": "bot"}), {"OPENAI_API_KEY": "k"},
     "hosts[0].token_env: is required (or token_file)"),
    ({**config(), "repos": [{"host": "other", "path": "a/b"}]}, {"T": "x", "OPENAI_API_KEY": "k"},
     "repos[0].host: no [[hosts]] named 'other'"),
    (config(bot={"mention_aliases": ["@two words"]}), {"T": "x", "OPENAI_API_KEY": "k"},
     "bot.mention_aliases: invalid alias '@two words'"),
    (config(daemon={"metrics_listen": "9464"}), {"T": "x", "OPENAI_API_KEY": "k"},
     "daemon.metrics_listen: expected HOST:PORT"),
    ({"hosts": []}, {}, "hosts: at least one [[hosts]] table is required"),
])
def test_errors_name_the_key(data: dict[str, Any], env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(data, env)
    assert str(caught.value).startswith(message)


def test_a_local_model_server_needs_no_key() -> None:
    settings = parse(config(ai={"api_key_env": "", "base_url": "http://127.0.0.1:11434/v1"}),
                     {"T": "x"})
    assert not settings.ai.api_key


def test_secrets_do_not_show_in_repr() -> None:
    settings = parse(config(), {"T": "glpat-very-secret", "OPENAI_API_KEY": "sk-very-secret"})
    assert "very-secret" not in repr(settings)
    assert repr(Secret("x")) == "Secret('***')"


OK_ENV = {"T": "x", "OPENAI_API_KEY": "k"}


@pytest.mark.parametrize(("data", "message"), [
    (config(daemon={"pol_interval_seconds": 3}), "daemon.pol_interval_seconds: unknown key"),
    ({**config(), "deamon": {}}, "deamon: unknown key"),
    (config(daemon={"poll_interval_seconds": -5}), "daemon.poll_interval_seconds: must be > 0"),
    (config(daemon={"hot_poll_interval_seconds": 0}),
     "daemon.hot_poll_interval_seconds: must be > 0"),
    (config(daemon={"backfill_hours": -1}), "daemon.backfill_hours: must be >= 0"),
    (config(daemon={"max_concurrent_jobs": "four"}),
     "daemon.max_concurrent_jobs: expected int, got 'four'"),
    (config(daemon={"max_attempts": 0}), "daemon.max_attempts: must be > 0, got 0"),
    (config(daemon={"database_url": "mysql://x"}), "daemon.database_url: expected sqlite:///"),
    (config(daemon={"log_format": "xml"}), "daemon.log_format: expected auto, console or json"),
    (config(bot={"mention_aliases": []}), "bot.mention_aliases: name at least one alias"),
    (config(bot={"mention_aliases": "@livereview"}),
     "bot.mention_aliases: expected list, got '@livereview'"),
    (config(bot={"ignore_users": ["ok", ""]}),
     "bot.ignore_users: expected a list of non-empty strings"),
    (config(bot={"answer_closed_mrs": "yes"}), "bot.answer_closed_mrs: expected bool"),
    (config(ai={"base_url": "api.openai.com"}), "ai.base_url: expected an http(s) URL"),
    (config(ai={"timeout_seconds": 0}), "ai.timeout_seconds: must be > 0"),
    ({"hosts": [{**HOST, "token_env": "T"}, {**HOST, "token_env": "T"}], "repos": [REPO]},
     "hosts[1].name: duplicate host name 'gl'"),
    (config({"token_env": "T", "name": ""}), "hosts[0].name: is required"),
    (config({"token_env": "T", "url": ""}), "hosts[0].url: is required"),
    (config({"token_env": "T", "type": "gitea"}), "hosts[0].type: expected one of"),
    (config({"token_env": "T", "ca_bundle": "/no/such/ca.pem"}),
     "hosts[0].ca_bundle: no such file /no/such/ca.pem"),
    (config({"token_env": "T", "list_strategy": "fast"}),
     "hosts[0].list_strategy: expected auto, instance or project"),
    ({**config(), "repos": [REPO, REPO]}, "repos[1].path: 'a/b' is listed twice"),
    ({**config(), "repos": [{"host": "gl"}]}, "repos[0].path: is required"),
    ({**config(), "repos": []}, "repos: at least one [[repos]] table is required"),
    ({**config(), "repos": [{**REPO, "knowledge": [{"title": "t"}]}]},
     "repos[0].knowledge[0]: expected a repo path, a URL, or"),
    ({**config(), "hosts": {"name": "gl"}}, "hosts: expected list"),
])
def test_malformed_configs_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(data, OK_ENV)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_malformed_toml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text('[daemon]\npoll_interval_seconds = 30\nhot = = 3\n')
    with pytest.raises(ConfigError, match=r"invalid TOML: .*line 3"):
        load(path, OK_ENV)


def test_an_unreadable_token_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.token_file: cannot read .*directory"):
        parse(config({"token_file": str(tmp_path)}), {"OPENAI_API_KEY": "k"})
