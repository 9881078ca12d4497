"""The console's configuration page (web/config_view.py): every setting by its dotted key,
where each secret lives — never the secret, whatever it is."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from livereview.settings import parse
from livereview.web.config_view import effective

# Tokens as hosts and model servers issue them: printable, long enough to be worth masking.
SECRETS = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126,
                                         exclude_characters="\"'\\"),
                  min_size=16, max_size=60)


def document(tmp: Path) -> dict[str, object]:
    return {
        "daemon": {"database_url": f"sqlite:///{tmp / 'db.sqlite'}", "metrics_listen": ""},
        "ai": {"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": "AI_KEY"},
        "hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
                   "token_env": "GL_TOKEN"}],
        "repos": [{"host": "gl", "path": "acme/widgets"}],
    }


@given(token=SECRETS, key=SECRETS)
def test_no_secret_value_is_ever_a_row_and_its_source_always_is(token: str, key: str) -> None:
    settings = parse(document(Path("/nonexistent")), {"GL_TOKEN": token, "AI_KEY": key})
    assert settings.hosts[0].token.reveal() == token  # read: the page has it at hand
    rows = dict(effective(settings))
    assert rows["hosts[0].token_env"] == "'GL_TOKEN'" and rows["ai.api_key_env"] == "'AI_KEY'"
    assert not any(token in value or key in value for value in rows.values())
    assert not any(name.endswith((".token", ".api_key")) for name in rows)


def test_every_section_is_shown_with_its_defaults(tmp_path: Path) -> None:
    rows = dict(effective(parse(document(tmp_path), {"GL_TOKEN": "x" * 20, "AI_KEY": "k" * 20})))
    assert rows["repos[0].path"] == "'acme/widgets'"
    assert rows["web.listen"] == "''" and "daemon.poll_interval_seconds" in rows
    assert "bot.ack_reaction" in rows
