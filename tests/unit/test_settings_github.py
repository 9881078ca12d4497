"""Settings for a GitHub host: the API base by default, and the web URL is refused."""

from __future__ import annotations

import pytest

from livereview.settings import ConfigError, HostSettings, Secret, parse

ENV = {"T": "ghp_x", "OPENAI_API_KEY": "k"}


def github(**host: str) -> dict[str, object]:
    return {"hosts": [{"name": "gh", "type": "github", "token_env": "T", **host}],
            "repos": [{"host": "gh", "path": "acme/widgets"}]}


def test_github_defaults_to_api_github_com() -> None:
    [host] = parse(github(), ENV).hosts
    assert (host.type, host.url) == ("github", "https://api.github.com")


@pytest.mark.parametrize("url", ["https://ghe.example/api/v3", "https://ghe.example/api/v3/",
                                 "https://api.acme.ghe.com"])
def test_enterprise_urls_are_accepted(url: str) -> None:
    assert parse(github(url=url), ENV).hosts[0].url == url.rstrip("/")


@pytest.mark.parametrize("url", ["https://github.com", "https://ghe.example"])
def test_a_web_url_is_refused_with_the_api_base_to_use(url: str) -> None:
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.url: expected the API base, "
                       r"https://api\.github\.com or https://HOST/api/v3"):
        parse(github(url=url), ENV)


def test_code_may_point_at_a_fakes_loopback_url_a_file_may_not() -> None:
    # The contract tests build HostSettings for a fake GitHub at http://127.0.0.1:PORT.
    host = HostSettings(name="gh", type="github", url="http://127.0.0.1:8080",
                        token=Secret("ghp_x"))
    assert (host.url, host.token.reveal()) == ("http://127.0.0.1:8080", "ghp_x")
    with pytest.raises(ConfigError, match=r"hosts\[0\]\.url: expected the API base"):
        parse(github(url="http://127.0.0.1:8080"), ENV)
