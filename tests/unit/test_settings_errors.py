"""What a config error says: one line, the key path, the most useful problem first."""

from __future__ import annotations

from typing import Any

import pytest

from livereview.settings import ConfigError, parse

ENV = {"T": "x", "OPENAI_API_KEY": "k"}
HOST = {"name": "gl", "type": "gitlab", "url": "https://gitlab.example", "token_env": "T"}
REPO = {"host": "gl", "path": "a/b"}


def config(host: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    return {"hosts": [{**HOST, **(host or {})}], "repos": [REPO], **sections}


def error(data: dict[str, Any], env: dict[str, str] = ENV) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(data, env)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and message.isprintable()
    return message


def test_values_are_escaped_and_cut_short() -> None:
    message = error(config(daemon={"log_format": "x\n\u202e" + "y" * 200}))
    assert message == r"daemon.log_format: expected auto, console or json, got 'x\n\u202e" + \
        "y" * 36 + "…'"


def test_odd_key_names_are_quoted_on_one_line() -> None:
    assert error({**config(), "a\nb\u202ec": 1}) == r"'a\nb\u202ec': unknown key"


def test_a_misspelt_key_is_reported_before_what_it_leaves_missing() -> None:
    misspelt = {k: v for k, v in HOST.items() if k != "name"} | {"nmae": "gl"}
    assert error({"hosts": [misspelt], "repos": [REPO]}) == "hosts[0].nmae: unknown key"
    assert error(config(ai={"api_key_evn": "X"}), {"T": "x"}) == "ai.api_key_evn: unknown key"
    assert error({"hosts": [HOST], "repo": [REPO]}) == "repo: unknown key"


def test_mistakes_in_the_file_come_before_a_missing_variable() -> None:
    assert error(config(daemon={"log_format": "xml"}), {}).startswith("daemon.log_format: ")
    assert error({**config(), "repos": [{"host": "x", "path": "a/b"}]}, {}) == (
        "repos[0].host: no [[hosts]] named 'x'")


def test_a_wrong_value_is_reported_before_a_missing_one() -> None:
    # The wrong value is what the operator just wrote; the missing tables come next.
    assert error({"daemon": {"poll_interval_seconds": 0.0001}}) == (
        "daemon.poll_interval_seconds: must be >= 1, got 0.0001 (range 1 to 86400)")
    assert error({"daemon": {}}) == "hosts: at least one [[hosts]] table is required"
    assert error({"hosts": [{"type": "gitlab", "token_env": "T", "url": 5}]}) == (
        "hosts[0].url: expected str, got 5")


def test_a_rule_across_keys_waits_for_each_key_to_be_valid() -> None:
    assert error(config(daemon={"hot_poll_interval_seconds": 60,
                                "poll_interval_seconds": "often"})) == (
        "daemon.poll_interval_seconds: expected float, got 'often'")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "htp://hooks.internal/x", "hooks"])
def test_a_notify_url_that_is_not_http_is_refused_by_check(url: str) -> None:
    """It used to pass `check`, and every run with changes requested then stayed in
    `notifying` for good (found by an attack session)."""
    message = error(config(review={"notify_url": url}))
    assert message.startswith("review.notify_url: expected an http(s) URL, got ")


def test_no_notify_url_and_an_http_one_are_fine() -> None:
    assert parse(config(), ENV).review.notify_url == ""
    assert parse(config(review={"notify_url": "https://hooks.internal/lr"}), ENV
                 ).review.notify_url == "https://hooks.internal/lr"


def test_a_notify_url_is_kept_as_written() -> None:
    url = "https://hooks.internal/services/T0/B1/"
    assert parse(config(review={"notify_url": url}), ENV).review.notify_url == url
