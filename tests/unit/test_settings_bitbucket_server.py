"""Settings of a Bitbucket Data Center host: the server's base URL, nothing else."""

from __future__ import annotations

import pytest

from livereview.settings import ConfigError, parse

ENV = {"T": "token", "OPENAI_API_KEY": "k"}


def config(url: str) -> dict[str, object]:
    return {"hosts": [{"name": "bbs", "type": "bitbucket-server", "url": url, "token_env": "T"}],
            "repos": [{"host": "bbs", "path": "ACME/widgets"}]}


@pytest.mark.parametrize("url", ["https://bitbucket.example.com",
                                 "https://bitbucket.example.com/",
                                 "https://git.example.com/bitbucket",
                                 "https://git.example.com/restricted"])
def test_the_servers_base_is_accepted(url: str) -> None:
    host = parse(config(url), ENV).hosts[0]
    assert (host.type, host.url) == ("bitbucket-server", url.rstrip("/"))


@pytest.mark.parametrize("url", ["https://bitbucket.example.com/rest/api/1.0",
                                 "https://git.example.com/bitbucket/rest/api/latest/",
                                 "https://bitbucket.example.com/rest"])
def test_an_api_url_is_refused_in_one_line(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(config(url), ENV)
    message = str(caught.value)
    assert message.startswith("hosts[0].url: expected the server's base URL")
    assert "\n" not in message


def test_the_url_is_required() -> None:
    with pytest.raises(ConfigError, match=r"hosts\[0\].url: is required"):
        parse(config(""), ENV)
