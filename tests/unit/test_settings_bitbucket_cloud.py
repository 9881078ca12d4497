"""Settings for a Bitbucket Cloud host: the API base by default, Basic auth with `login`, and
an access token (no login) named by `username`, its bot user's name."""

from __future__ import annotations

import base64

import pytest

from livereview.app.hosts import _headers
from livereview.settings import ConfigError, HostSettings, Secret, parse

ENV = {"T": "ATATT-secret", "OPENAI_API_KEY": "k"}


def bitbucket(**host: str) -> dict[str, object]:
    return {"hosts": [{"name": "bb", "type": "bitbucket-cloud", "token_env": "T", **host}],
            "repos": [{"host": "bb", "path": "acme/widgets"}]}


def test_the_api_base_is_the_default_and_login_means_basic_auth() -> None:
    [host] = parse(bitbucket(login="bot@example.com"), ENV).hosts
    assert (host.url, host.login) == ("https://api.bitbucket.org/2.0", "bot@example.com")
    pair = base64.b64encode(b"bot@example.com:ATATT-secret").decode()
    assert _headers(host, host.token)["Authorization"] == f"Basic {pair}"


def test_without_login_the_secret_is_an_access_token_named_by_username() -> None:
    [host] = parse(bitbucket(username="livereview-bot"), ENV).hosts
    assert _headers(host, host.token)["Authorization"] == "Bearer ATATT-secret"
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.username: required with an access "
                       r"token \(no login\): the token's name"):
        parse(bitbucket(), ENV)


@pytest.mark.parametrize("url", ["https://bitbucket.org", "https://bitbucket.org/acme"])
def test_a_web_url_is_refused_with_the_api_base_to_use(url: str) -> None:
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.url: expected the API base, "
                       r"https://api\.bitbucket\.org/2\.0, got"):
        parse(bitbucket(url=url, login="bot"), ENV)


@pytest.mark.parametrize("login", ["a:b", "bot name", "", "bot\x00"])
def test_a_login_that_would_change_who_logs_in_is_refused(login: str) -> None:
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.login: expected an account name"):
        parse(bitbucket(login=login), ENV)


def test_login_belongs_to_bitbucket_cloud_only() -> None:
    config = {"hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
                         "token_env": "T", "login": "bot"}],
              "repos": [{"host": "gl", "path": "a/b"}]}
    with pytest.raises(ConfigError, match=r'hosts\[0\]\.login: only for type = '
                       r'"bitbucket-cloud"'):
        parse(config, ENV)


def test_code_may_point_at_a_fakes_loopback_url_a_file_may_not() -> None:
    host = HostSettings(name="bb", type="bitbucket-cloud", url="http://127.0.0.1:8080",
                        token=Secret("x"), login="bot")
    assert host.url == "http://127.0.0.1:8080"
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.url: expected the API base"):
        parse(bitbucket(url="http://127.0.0.1:8080", login="bot"), ENV)
