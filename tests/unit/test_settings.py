"""Settings: secrets from env or files (systemd credentials), defaults, precise errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from livereview.settings import ConfigError, Secret, parse

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
