"""`[[hosts.tokens]]`: a token per organisation, group or repository of one host (docs/DESIGN.md
"Identities"), read with the same rules as the host's own token and never echoed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from livereview.app.hosts import connect, token_picker
from livereview.hosts.base import PacedInbox
from livereview.hosts.routed import Routed
from livereview.metrics import Metrics
from livereview.settings import ConfigError, parse
from livereview.web.config_view import effective
from tests.unit.test_settings_secrets import GITHUB, GITLAB, HOST, REPO, assert_safe

ORG_B = "glpat-Org2Token9QwErTy7UiOp"
ENV = {"T": GITLAB, "T2": ORG_B, "OPENAI_API_KEY": "sk-proj-Q1w2E3r4T5y6U7i8O9p0"}


def config(*tokens: dict[str, Any], host: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"hosts": [{**HOST, **(host or {}), "tokens": list(tokens)}], "repos": [REPO]}


def error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(data, ENV)
    message = str(caught.value)
    assert_safe(message)
    assert ORG_B not in message
    return message


def test_each_token_is_read_from_its_own_variable_beside_the_hosts_token() -> None:
    settings = parse(config({"repos": ["org2/*", "/org3/app/"], "token_env": "T2"}), ENV)
    [host] = settings.hosts
    [token] = host.tokens
    assert host.token.reveal() == GITLAB and token.token.reveal() == ORG_B
    assert token.repos == ("org2/*", "org3/app")
    assert ORG_B not in repr(settings)


def test_a_repo_takes_the_first_table_that_matches_it_else_the_hosts_own_token() -> None:
    settings = parse(config({"repos": ["org2/app"], "token_env": "T2"},
                            {"repos": ["org2/**"], "token_env": "T"}), ENV)
    pick = token_picker(settings.hosts[0])
    assert pick("org2/app") == 1
    assert pick("ORG2/App") == 1  # GitLab and GitHub resolve a path whatever its case
    assert pick("org2/sub/lib") == 2
    assert pick("org2x/app") == 0
    assert pick("a/b") == 0


@pytest.mark.parametrize(("table", "expected"), [
    ({"repos": [], "token_env": "T2"},
     "hosts[0].tokens[0].repos: expected at least one repo path pattern"),
    ({"token_env": "T2"}, "hosts[0].tokens[0].repos"),
    ({"repos": ["org2/[ab]"], "token_env": "T2"},
     "hosts[0].tokens[0].repos: character classes"),
    ({"repos": ["org2/*"], "token_env": "T2", "token": ORG_B},
     "hosts[0].tokens[0].token: unknown key (set token_env or token_file)"),
    ({"repos": ["org2/*"], "token_env": "T2", "scopes": ORG_B},
     "hosts[0].tokens[0].scopes: unknown key"),
    ({"repos": ["org2/*"]}, "hosts[0].tokens[0].token"),
    ({"repos": ["org2/*"], "token_env": "UNSET"}, "UNSET"),
])
def test_a_wrong_token_table_is_named_and_its_secret_never_shown(
        table: dict[str, Any], expected: str) -> None:
    assert expected in error(config(table))


def test_only_gitlab_and_github_take_per_repo_tokens() -> None:
    data = config({"repos": ["ws/*"], "token_env": "T2"},
                  host={"type": "bitbucket-server", "url": "https://bitbucket.example"})
    assert "hosts[0].tokens: only for type = \"gitlab\" or \"github\"" in error(data)


def test_a_github_host_takes_them_too() -> None:
    env = {**ENV, "T": GITHUB}
    data = config({"repos": ["org2/*"], "token_env": "T2"},
                  host={"type": "github", "url": "https://api.github.com"})
    assert parse(data, env).hosts[0].tokens[0].token.reveal() == ORG_B


def test_the_web_config_view_shows_each_tokens_source_never_its_value() -> None:
    rows = dict(effective(parse(config({"repos": ["org2/*"], "token_env": "T2"}), ENV)))
    assert rows["hosts[0].tokens[0].token_env"] == "'T2'"
    assert "org2/*" in rows["hosts[0].tokens[0].repos"]
    assert not any(ORG_B in value or GITLAB in value for value in rows.values())


def test_a_routed_host_paces_an_inbox_only_where_its_adapters_have_one() -> None:
    """GitHub's notifications stand in for its cheap listing on the cycles they are read
    (sync/plan.py); a routed GitLab host that claimed an inbox would stop listing after its
    first cycle and miss every reply, edit and reviewer change the listing finds."""
    gitlab = connect(parse(config({"repos": ["org2/*"], "token_env": "T2"}), ENV).hosts[0],
                     Metrics())
    github = connect(parse(config({"repos": ["org2/*"], "token_env": "T2"},
                                  host={"type": "github", "url": "https://api.github.com"}),
                           {**ENV, "T": GITHUB}).hosts[0], Metrics())
    assert isinstance(gitlab, Routed) and not isinstance(gitlab, PacedInbox)
    assert isinstance(github, Routed) and isinstance(github, PacedInbox)


def test_the_tokens_of_hosts_tokens_are_among_the_secrets_every_log_and_page_masks() -> None:
    """Was: the redactor's list held the hosts' own tokens, the model's key and the web
    token, but not a `[[hosts.tokens]]` token, so a log line quoting one showed it."""
    from livereview.settings.light import parse as parse_light

    data = config({"repos": ["org2/*"], "token_env": "T2"})
    settings = parse(data, ENV)
    assert {GITLAB, ORG_B} <= set(settings.secrets())
    light = parse_light(data, ENV)  # `livereview mr` reads this file without the models
    assert light is not None and set(light.secrets()) == set(settings.secrets())


def test_the_cli_hands_the_redactor_every_token_on_both_ways_of_reading_a_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from livereview import log_setup
    from livereview.cli import commands

    masked: list[tuple[str, ...]] = []
    monkeypatch.setattr(log_setup, "configure",
                        lambda _format="auto", secrets=(), **_: masked.append(tuple(secrets)))
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    toml = ('[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
            'token_env = "T"\n[[hosts.tokens]]\nrepos = ["org2/*"]\ntoken_env = "T2"\n'
            '[[repos]]\nhost = "gl"\npath = "a/b"\n[daemon]\n'
            f'database_url = "sqlite:///{tmp_path / "state.db"}"\n')
    # The light reader, then the models (it leaves `[knowledge]` to them).
    for extra in ("", '[knowledge]\nglobal = ["docs/adr.md"]\n'):
        path = tmp_path / "livereview.toml"
        path.write_text(toml + extra, encoding="utf-8")
        masked.clear()
        # Refused before any request (not a watched MR), after the log was set up.
        assert commands.main(["--config", str(path), "mr", "comments", "gl:x/y!1"]) == 2
        assert masked and {GITLAB, ORG_B} <= set(masked[-1]), extra
