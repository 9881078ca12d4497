"""A config error never shows a secret (docs/DESIGN.md §9: one echoed a whole `[hosts]` table
with its token), and loading that needs no secret reads none (docs/DESIGN.md §7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from livereview.settings import ConfigError, Secret, load_ai, parse

GITLAB = "glpat-Zx9QwErTy7UiOp3AsDfG"
GITHUB = "ghp_Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNm"
OPENAI = "sk-proj-Q1w2E3r4T5y6U7i8O9p0"
# A password that looks like nothing in particular: only where it sits protects it.
PASSWORD = "hunter2-correct-horse"
SECRETS = (GITLAB, GITHUB, OPENAI, PASSWORD)
ENV = {"T": GITLAB, "OPENAI_API_KEY": OPENAI}
HOST = {"name": "gl", "type": "gitlab", "url": "https://gitlab.example", "token_env": "T"}
REPO = {"host": "gl", "path": "a/b"}


def config(host: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    return {"hosts": [{**HOST, **(host or {})}], "repos": [REPO], **sections}


def assert_safe(message: str) -> None:
    assert len(message.splitlines()) == 1
    for secret in SECRETS:
        # Not even a part of one: a truncated echo would still leak most of it.
        assert all(secret[i:i + 10] not in message for i in range(len(secret) - 9)), message
    assert "{'" not in message and "['" not in message, message  # no table or list echoed


def error(data: dict[str, Any], env: dict[str, str] = ENV) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(data, env)
    message = str(caught.value)
    assert_safe(message)
    return message


@pytest.mark.parametrize(("data", "expected"), [
    # The incident: [hosts] written as a table, with the token in it.
    ({"hosts": {"name": "gl", "token": GITLAB, "password": PASSWORD}, "repos": [REPO]},
     "hosts: expected list, got a table"),
    (config({"token": GITLAB}), "hosts[0].token: unknown key (set token_env or token_file)"),
    (config({"token": PASSWORD}), "hosts[0].token: unknown key (set token_env or token_file)"),
    (config(ai={"api_key": OPENAI}),
     "ai.api_key: unknown key (set api_key_env or api_key_file)"),
    (config({"password": PASSWORD}), "hosts[0].password: unknown key"),
    (config(daemon={"secret": PASSWORD}), "daemon.secret: unknown key"),
    ({**config(), GITLAB: 1}, "<a key that looks like a secret>: unknown key"),
    (config({"name": [GITLAB, PASSWORD]}), "hosts[0].name: expected str, got a list"),
    (config({"url": {"token": GITLAB}}), "hosts[0].url: expected str, got a table"),
    (config(bot={"ignore_users": GITLAB}),
     "bot.ignore_users: expected list, got a string that looks like a secret"),
    (config(daemon={"poll_interval_seconds": {"password": PASSWORD}}),
     "daemon.poll_interval_seconds: expected float, got a table"),
    (config(ai={"temperature": OPENAI}),
     "ai.temperature: expected float, got a string that looks like a secret"),
    (config(bot={"ack_reaction": "x" * 40 + GITHUB}),
     "bot.ack_reaction: must be at most 64 characters"),
    # The token pasted where the name of its variable belongs.
    (config({"token_env": GITLAB}),
     "hosts[0].token_env: expected the name of an environment variable, got a token"),
    (config({"token_env": GITHUB}),
     "hosts[0].token_env: expected the name of an environment variable, got a token"),
    (config({"token_env": PASSWORD}), "hosts[0].token_env: expected the name of an environment "
                                      "variable, got something else"),
    (config({"token_env": 12345}), "hosts[0].token_env: expected str, got an integer"),
    (config(ai={"api_key_env": [OPENAI]}), "ai.api_key_env: expected str, got a list"),
    (config({"token_env": "", "token_file": GITLAB}), "hosts[0].token_file: cannot read "),
    # Credentials inside URLs.
    (config({"url": f"https://oauth2:{PASSWORD}@gitlab.example"}),
     "hosts[0].url: must not carry credentials (user:password@)"),
    (config(ai={"base_url": f"ftp://key:{PASSWORD}@llm.example"}),
     "ai.base_url: expected an http(s) URL, got 'ftp://llm.example'"),
    (config(daemon={"database_url": f"mysql://root:{PASSWORD}@db/livereview"}),
     "daemon.database_url: expected sqlite:///PATH or postgresql+psycopg://USER@HOST/DB, got "
     "'mysql://db/livereview'"),
])
def test_no_error_shows_a_secret(data: dict[str, Any], expected: str) -> None:
    assert error(data).startswith(expected)


def test_a_token_read_from_a_file_is_never_in_a_later_error(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(GITLAB)
    message = error({**config({"token_env": "", "token_file": str(tmp_path / "token")}),
                     "repos": [{"host": "nope", "path": "a/b"}]})
    assert message == "repos[0].host: no [[hosts]] named 'nope'"


def test_secrets_do_not_show_in_repr_or_str() -> None:
    settings = parse(config(), ENV)
    assert settings.hosts[0].token.reveal() == GITLAB
    for text in (repr(settings), str(settings), repr(settings.hosts[0]), str(settings.ai)):
        assert_safe(" ".join(text.splitlines()))
    assert repr(Secret(GITLAB)) == str(Secret(GITLAB)) == "Secret('***')"


def test_an_unset_key_variable_says_how_to_need_none() -> None:
    assert error(config(), {"T": "x"}) == (
        "ai.api_key_env: environment variable OPENAI_API_KEY is not set (for a server that "
        'needs no key, set api_key_env = "")')


def test_store_only_loading_reads_no_secret_but_checks_where_they_come_from() -> None:
    settings = parse(config(), {}, secrets=False)
    assert not settings.hosts[0].token and not settings.ai.api_key
    assert settings.hosts[0].token_env == "T"
    with pytest.raises(ConfigError, match=r"^hosts\[0\]\.token_env: is required"):
        parse(config({"token_env": ""}), {}, secrets=False)
    with pytest.raises(ConfigError, match=r"^hosts\[0\]\.token_file: set token_env or"):
        parse(config({"token_file": "/nope"}), {}, secrets=False)


def test_the_demo_reads_only_the_ai_section_and_its_key(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text('[ai]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "K"\n\n'
                    '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
                    'token_env = "LIVEREVIEW_GITLAB_TOKEN"\n\nhosts_typo = 1\n')
    ai = load_ai(path, {"K": OPENAI})
    assert (ai.base_url, ai.api_key.reveal()) == ("http://127.0.0.1:9/v1", OPENAI)
    with pytest.raises(ConfigError, match=r"^ai\.api_key_env: environment variable K is not"):
        load_ai(path, {"LIVEREVIEW_GITLAB_TOKEN": GITLAB})
    path.write_text('[daemon]\npoll_interval_seconds = 30\n')  # no [ai]: its defaults
    with pytest.raises(ConfigError, match=r"^ai\.api_key_env: .*OPENAI_API_KEY is not set"):
        load_ai(path, {})
    assert load_ai(path, {"OPENAI_API_KEY": OPENAI}).model == "gpt-4o-mini"
    path.write_text('[ai]\nbase_url = "ftp://x"\n')
    with pytest.raises(ConfigError, match=r"^ai\.base_url: expected an http\(s\) URL"):
        load_ai(path, {})


@pytest.mark.parametrize("broken", [GITLAB + "\n", GITLAB[:8] + "\n" + GITLAB[8:], " " + GITLAB,
                                    GITLAB + "\r", GITLAB[:5] + "\x00" + GITLAB[5:]])
def test_a_token_that_cannot_go_into_a_header_is_refused_unshown(broken: str) -> None:
    message = error(config(), {**ENV, "T": broken})
    assert message.startswith("hosts[0].token_env: environment variable T holds a line break")


def test_a_token_file_with_a_control_character_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(GITLAB[:6] + "\x1b" + GITLAB[6:] + "\n")
    host = {k: v for k, v in HOST.items() if k != "token_env"} | {"token_file": str(token)}
    message = error({"hosts": [host], "repos": [REPO]})
    assert message.startswith("hosts[0].token_file: the token in ")
