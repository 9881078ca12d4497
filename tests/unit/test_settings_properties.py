"""Generative: whatever a config holds, loading it gives Settings or one ConfigError line that
names a key and shows no secret; never another exception."""

from __future__ import annotations

import copy
import re
import tempfile
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livereview.settings import (
    AISettings,
    BotSettings,
    ConfigError,
    DaemonSettings,
    HostSettings,
    LessonsSettings,
    RepoSettings,
    Settings,
    load,
    parse,
)
from tests.hypothesis_tiers import examples

TOKENS = ("glpat-Zx9QwErTy7UiOp3AsDfG", "ghp_Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNm",
          "sk-proj-Q1w2E3r4T5y6U7i8O9p0")
PASSWORD = "hunter2-correct-horse"  # protected by where it sits, not by how it looks
# The environment's secrets, which the generated documents never contain.
ENV = {"T": "glpat-Qx7Rm2Vb9Kp4Wz8Ln3Ty", "OPENAI_API_KEY": "sk-Hd5Jf8Nc2Xs6Gq9Bv4Mw"}
BASE: dict[str, Any] = {
    "daemon": {"poll_interval_seconds": 30, "metrics_listen": ""},
    "ai": {"api_key_env": "OPENAI_API_KEY"},
    "hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
               "token_env": "T"}],
    "repos": [{"host": "gl", "path": "a/b"}],
}
KEYS = {name: [*sorted(model.model_fields), "token_env", "token_file", "api_key_env", "typo"]
        for name, model in (("daemon", DaemonSettings), ("bot", BotSettings),
                            ("ai", AISettings), ("lessons", LessonsSettings),
                            ("hosts", HostSettings), ("repos", RepoSettings))}
SECRET_KEYS = ("token", "password", "api_key", "db_secret", "credentials", "authToken")
# What a one-line error starts with: a key path (possibly quoted or hidden), or the file.
KEY_PATH = re.compile(r"^(the file: |'|\"|<a key that looks like a secret>|[\w-])")

texts = st.one_of(
    st.text(max_size=60),
    st.sampled_from(TOKENS),
    st.builds(lambda before, token, after: before + token + after,
              st.text(max_size=5), st.sampled_from(TOKENS), st.text(max_size=5)),
)
scalars = st.one_of(
    st.booleans(), st.integers(), st.integers(min_value=2 ** 63, max_value=10 ** 30),
    st.floats(), texts,
    st.datetimes(timezones=st.just(UTC)), st.dates(), st.times(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(st.text(max_size=8), texts), inner,
                                            max_size=3)),
    max_leaves=8)
# A password goes where secrets go: under a secret-looking key, or inside a table or list.
hidden_password = st.one_of(
    st.tuples(st.sampled_from(SECRET_KEYS), st.just(PASSWORD)),
    st.tuples(st.sampled_from([*KEYS["daemon"], *KEYS["bot"]]),
              st.sampled_from([[PASSWORD], {"password": PASSWORD}, {"x": [PASSWORD]}])),
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """The base config with a few keys set, added or removed, anywhere."""
    data = copy.deepcopy(BASE)
    # Keys inside sections first, then the top level (which may replace a whole section).
    sections = sorted(draw(st.lists(st.sampled_from([*KEYS, "root"]), min_size=1, max_size=4)),
                      key=lambda name: name == "root")
    for section in sections:
        table: dict[str, Any]
        if section == "root":
            table = data
            key = draw(st.one_of(st.sampled_from([*KEYS, "source"]), texts))
        elif section in ("hosts", "repos"):
            table = data[section][0]
            key = draw(st.sampled_from(KEYS[section]))
        else:
            table = data.setdefault(section, {})
            key = draw(st.sampled_from(KEYS[section]))
        if draw(st.booleans()) and key in table:
            del table[key]
        elif draw(st.integers(0, 4)) == 0:
            key, value = draw(hidden_password)
            table[key] = value
        else:
            table[key] = draw(values)
    return data


def containers(value: object) -> list[object]:
    """Every non-empty table and list inside `value`."""
    if isinstance(value, dict):
        inner = [c for v in value.values() for c in containers(v)]
        return [value, *inner] if value else inner
    if isinstance(value, list):
        inner = [c for v in value for c in containers(v)]
        return [value, *inner] if value else inner
    return []


def assert_safe(message: str, data: object = None) -> None:
    assert len(message.splitlines()) == 1, message
    for table_or_list in containers(data):
        shown = repr(table_or_list)  # not `[0]`: that is also how a key path names an item
        assert len(shown) < 8 or shown not in message, message
    assert message.isprintable(), message
    assert KEY_PATH.match(message), message
    for secret in (*TOKENS, PASSWORD, *ENV.values()):
        assert all(secret[i:i + 10] not in message for i in range(len(secret) - 9)), message


@settings(max_examples=examples(400), deadline=None)
@given(mutated())
def test_a_mutated_config_loads_or_fails_on_one_safe_line(data: dict[str, Any]) -> None:
    try:
        result = parse(data, ENV)
    except ConfigError as exc:
        assert_safe(str(exc), data)
    else:
        assert isinstance(result, Settings)
        assert all(secret not in repr(result) for secret in ENV.values())


@settings(max_examples=examples(150), deadline=None)
@given(st.dictionaries(st.one_of(st.sampled_from([*KEYS, "source"]), texts), values,
                       max_size=6))
def test_any_document_of_random_tables_fails_on_one_safe_line(data: dict[str, Any]) -> None:
    try:
        parse(data, ENV)
    except ConfigError as exc:
        assert_safe(str(exc), data)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_same_holds_through_a_toml_file(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "livereview.toml"
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
        try:
            load(path, ENV)
        except ConfigError as exc:
            assert_safe(str(exc), data)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(["daemon", "bot", "ai", "hosts", "repos"]), st.data())
def test_a_misspelt_key_is_named_before_anything_it_leaves_missing(section: str,
                                                                     data: st.DataObject
                                                                     ) -> None:
    config = copy.deepcopy(BASE)
    table = config[section][0] if section in ("hosts", "repos") else config.setdefault(
        section, {})
    key = data.draw(st.sampled_from(sorted(table) or ["model"]))
    typo = data.draw(st.from_regex(r"[a-z_]{1,20}", fullmatch=True).filter(
        lambda name: name not in KEYS[section]))
    table[typo] = table.pop(key, "x")
    where = f"{section}[0]" if section in ("hosts", "repos") else section
    with pytest.raises(ConfigError) as caught:
        parse(config, {})
    assert str(caught.value) == f"{where}.{typo}: unknown key"

