"""The light reader of `livereview mr` (settings/light.py) is sound: whenever it returns
settings, the models accept the same document and environment and hold the same values,
key by key; whenever the models refuse it, it returns None (docs/getting-started.md, "A CLI
for loops"). And it is not empty: the files `init`, `sandbox` and the start-up bench write
are read by it."""

from __future__ import annotations

import ast
import copy
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
import tomli_w
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from livereview.settings import ConfigError, Secret, Settings, parse
from livereview.settings.checks import Between, OneOf
from livereview.settings.light import LightSettings
from livereview.settings.light import parse as light_parse
from livereview.settings.models import SECTIONS
from livereview.settings.section_rules import SEVERITIES, VERDICTS
from tests.hypothesis_tiers import examples

ROOT = Path(__file__).resolve().parents[2]
TOOLBOX_SECTIONS = ("daemon", "bot", "ai", "lessons", "answers", "review", "web")


def assert_same(light: object, model: object, where: str = "") -> None:
    """Every field of the light result equals the model's, of the same type."""
    assert is_dataclass(light), where
    for f in fields(light):
        mine, theirs = getattr(light, f.name), getattr(model, f.name)
        at = f"{where}.{f.name}"
        if isinstance(mine, Secret):
            assert isinstance(theirs, Secret) and mine.reveal() == theirs.reveal(), at
        elif is_dataclass(mine):
            assert_same(mine, theirs, at)
        elif isinstance(mine, tuple) and any(is_dataclass(item) for item in mine):
            assert isinstance(theirs, tuple) and len(mine) == len(theirs), at
            for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
                assert_same(a, b, f"{at}[{index}]")
        else:
            assert type(mine) is type(theirs) and mine == theirs, (at, mine, theirs)


def assert_equivalent(data: Mapping[str, object], env: Mapping[str, str]) -> LightSettings | None:
    fast = light_parse(data, env)
    try:
        full: Settings | None = parse(data, env, secrets=True)
    except ConfigError:
        full = None
    if full is None:
        assert fast is None, "the light reader took a document the models refuse"
    if fast is not None:
        assert full is not None
        assert_same(fast, full)
        assert fast.secrets() == full.secrets()
        assert [fast.repos_of(h.name) for h in fast.hosts] == [
            full.repos_of(h.name) for h in full.hosts]
    return fast


# ---- the documents: a valid base, then a few keys set, removed or added, anywhere -----------
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Token files (present, empty, two lines; for `[web]` long enough, too short, not
    UTF-8), a CA bundle, a directory of repos."""
    where = tmp_path_factory.mktemp("light")
    (where / "tok").write_text("glpat-file-token-value\n", encoding="utf-8")
    (where / "webtok").write_text("web-sign-in-token-0123456789\n", encoding="utf-8")
    (where / "short").write_text("web-15-chars-xx\n", encoding="utf-8")
    (where / "latin1").write_bytes(b"web-sign-in-caf\xe9-0123456789\n")
    (where / "empty").write_text("\n", encoding="utf-8")
    (where / "two").write_text("a\nb\n", encoding="utf-8")
    (where / "repos").mkdir()
    return where


def _base(files: Path) -> dict[str, object]:
    return {"daemon": {"database_url": f"sqlite:///{files / 'db.sqlite'}"},
            "ai": {"api_key_env": "K"},
            "hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
                       "token_env": "T"}],
            "repos": [{"host": "gl", "path": "a/b"}]}


def _model_keys() -> dict[str, type[BaseModel]]:
    from livereview.settings.hosts import HostSettings, TokenSettings
    from livereview.settings.models import RepoSettings

    models = {name: Settings.model_fields[name].annotation for name in TOOLBOX_SECTIONS}
    found = {name: m for name, m in models.items() if isinstance(m, type)
             and issubclass(m, BaseModel)}
    return {**found, "hosts": HostSettings, "repos": RepoSettings, "tokens": TokenSettings}


def _bounds(model: type[BaseModel], key: str) -> list[object]:
    """Each bound of the key's model, and one step either side; each choice, and another."""
    info = model.model_fields.get(key)
    found: list[object] = []
    for rule in info.metadata if info is not None else ():
        if isinstance(rule, Between):
            for edge in (rule.low, rule.high):
                found += [edge, edge - 1, edge + 1, edge - 0.001, edge + 0.001, int(edge)]
        elif isinstance(rule, OneOf):
            found += [*rule.choices, "nope", rule.choices[0].upper()]
    return found


def _strings(files: Path) -> list[object]:
    return ["", " ", "x", "T", "K", "UNSET", "EMPTY", "bad name", "ghp_Q1w2E3r4T5y6U7i8O9p0AsDf",
            "tok", "empty", "two", "missing", str(files / "tok"), str(files / "repos"),
            "/nonexistent", "@bot", "a b", "org/*", "a//b", "group/**", "a/[bc]", "a/b",
            "gl", "gh", "https://gitlab.example", "https://api.github.com",
            "https://github.example", "https://github.example/api/v3",
            "https://api.bitbucket.org/2.0", "https://bitbucket.example",
            "https://bb.example/rest/api/1.0", "http://127.0.0.1:9", "ftp://x",
            "https://user:pw@gitlab.example", "https://h.example:99999", "sqlite://",
            "sqlite:///:memory:", "postgresql+psycopg://u@h/db", "127.0.0.1:1", "opened",
            "push", "English", "me@example.com", "a:b", "replica-1", "x" * 65,
            "webtok", "short", "latin1", str(files / "webtok"), str(files / "short"),
            str(files / "latin1"), "X-Forwarded-User", "X_User", "-X", "https://hook.example/x/"]


def _valid(files: Path, model: type[BaseModel], key: str) -> list[object]:
    """Values near a key's bounds and choices, or those its rule takes (and some it does
    not: a bound's neighbours)."""
    section = next((name for name, m in _model_keys().items() if m is model), "")
    taken = _ruled(files).get((section, key), ([], []))[0]
    info = model.model_fields.get(key)
    default = info.default if info is not None and not info.is_required() else None
    flags: list[object] = [True, False] if isinstance(default, bool) else []
    return [v for v in _bounds(model, key) if v not in ("nope", "AUTO")] or taken or flags


def _values(files: Path, model: type[BaseModel], key: str) -> st.SearchStrategy[object]:
    section = next((name for name, m in _model_keys().items() if m is model), "")
    refused = _ruled(files).get((section, key), ([], []))[1]
    scalars: list[object] = [True, False, 0, 1, -1, 5, 2**40, 0.5, 30.0, math.nan, math.inf,
                             -math.inf, *_strings(files), *_bounds(model, key), *refused]
    return st.one_of(st.sampled_from(_valid(files, model, key) or scalars),
                     st.sampled_from(scalars),
                     st.lists(st.sampled_from(["org/*", "", "a/b", "@x", "push", "English",
                                               "ghost", 1, *SEVERITIES, *VERDICTS, "Critical",
                                               "approve"]), max_size=3),
                     st.just({"x": 1}), st.just({}))


URLS = {"gitlab": "https://gitlab.example", "github": "https://github.example/api/v3",
        "bitbucket-cloud": "https://api.bitbucket.org/2.0", "bitbucket-server": "https://bb.example"}
TYPES = ("gitlab", "github", "bitbucket-cloud", "bitbucket-server", "local", "gitea", "")


@st.composite
def documents(draw: st.DrawFn, files: Path) -> dict[str, object]:
    data = copy.deepcopy(_base(files))
    hosts = data["hosts"]
    repos = data["repos"]
    assert isinstance(hosts, list) and isinstance(repos, list)
    for _ in range(draw(st.integers(0, 2))):  # more hosts and repos, perhaps clashing
        kind = draw(st.sampled_from(TYPES))
        hosts.append({"name": draw(st.sampled_from(["gl", "gh", "bb", "lo"])), "type": kind,
                      "url": draw(st.sampled_from([URLS.get(kind, ""),
                                                   *_strings(files)[20:40]])),
                      draw(st.sampled_from(["token_env", "token_file"])):
                      draw(st.sampled_from(["T", "tok", "missing", str(files / "tok")]))})
        repos.append({"host": draw(st.sampled_from(["gl", "gh", "bb", "lo", "nope"])),
                      "path": draw(st.sampled_from(["a/b", "c/d", "/a/b/", str(files)]))})
    models = _model_keys()
    for _ in range(draw(st.integers(0, 4))):
        section = draw(st.sampled_from([*models, "root"]))
        if section == "root":
            name = draw(st.sampled_from([*SECTIONS, "source", "typo", "hosts", "repos"]))
            data[name] = draw(st.sampled_from([{}, {"approve": False}, [], "x"]))
            continue
        if section == "tokens":
            host = draw(st.sampled_from(hosts))
            assert isinstance(host, dict)
            host["tokens"] = [{"repos": ["org/*"], "token_env": "T"}]
            table = host["tokens"][0]
        elif section in ("hosts", "repos"):
            table = draw(st.sampled_from(hosts if section == "hosts" else repos))
        else:
            table = data.setdefault(section, {})
        if not isinstance(table, dict):  # the section was replaced by a value above
            continue
        model = models[section]
        key = draw(st.sampled_from([*model.model_fields, "typo", "token", "api_key"]))
        if draw(st.booleans()) and key in table:
            del table[key]
        else:
            table[key] = draw(_values(files, model, key))
    return data


@st.composite
def environments(draw: st.DrawFn, files: Path) -> dict[str, str]:
    # Set, so that only the rule on a variable's name refuses these names.
    env = {"EMPTY": "", "bad name": "glpat-env-token-value",
           "ghp_Q1w2E3r4T5y6U7i8O9p0AsDf": "glpat-env-token-value"}
    for name, value in (("T", "glpat-env-token-value"), ("K", "sk-key"),
                        ("OPENAI_API_KEY", "sk-default"),
                        ("STATE_DIRECTORY", str(files / "state")),
                        ("CREDENTIALS_DIRECTORY", str(files))):
        choice = draw(st.sampled_from(["set", "set", "set", "set", "unset", "empty",
                                       "two lines"]))
        if choice != "unset":
            env[name] = {"set": value, "empty": "", "two lines": "a\nb"}[choice]
    return env


@settings(max_examples=examples(600))
@given(data=st.data())
def test_whatever_the_document_the_light_reader_is_none_or_the_models_own_values(
        files: Path, data: st.DataObject) -> None:
    document, env = data.draw(documents(files)), data.draw(environments(files))
    try:
        parse(document, env)
        taken = "the models take it"
    except ConfigError:
        taken = "the models refuse it"
    fast = assert_equivalent(document, env)
    event(f"{taken}, the light reader " + ("too" if fast else "leaves it to them"))


@st.composite
def tuned(draw: st.DrawFn, files: Path) -> dict[str, object]:
    """The valid base with a few `[review]` and `[web]` keys set: the document above reaches
    them rarely with every other key still valid."""
    data = _base(files)
    models = _model_keys()
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from(["review", "web"]))
        table = data.setdefault(section, {})
        assert isinstance(table, dict)
        model = models[section]
        keys = [k for k in model.model_fields if k not in getattr(model, "derived", {})]
        odd = draw(st.integers(0, 9)) == 0  # now and then an unknown or a derived key
        key = draw(st.sampled_from(["typo", "token"] if odd else keys))
        valid = _valid(files, model, key)
        pick_valid = bool(valid) and draw(st.booleans())
        chosen = st.sampled_from(valid) if pick_valid else _values(files, model, key)
        table[key] = draw(chosen)
    return data


@settings(max_examples=examples(300))
@given(data=st.data())
def test_whatever_the_review_and_web_keys_the_light_reader_is_none_or_the_models_own_values(
        files: Path, data: st.DataObject) -> None:
    env = {"T": "glpat-env-token-value", "K": "sk-key", "CREDENTIALS_DIRECTORY": str(files)}
    document = data.draw(tuned(files))
    fast = assert_equivalent(document, env)
    web = document.get("web")
    token = isinstance(web, dict) and bool(web.get("token_file"))
    event(("taken" if fast else "left to the models") + (", a web token" if token else ""))


# ---- every key the light reader knows, set to each bound, choice and wrong type -------------
WRONG_TYPES: list[object] = [True, False, 0, 1, 1.5, -1.0, math.nan, math.inf, -math.inf, "",
                             " ", "1", "@x", "bad name", "ghp_Q1w2E3r4T5y6U7i8O9p0AsDf", [],
                             ["a"], [1], {}, {"x": 1}, 2**63 - 1]


def _keys() -> Iterator[tuple[str, str]]:
    for section, model in _model_keys().items():
        for key in model.model_fields:
            yield section, key


def _with(files: Path, section: str, key: str, value: object) -> dict[str, object]:
    """The base document with `key` of `section` set (of its first host or repo, or of a
    `[[hosts.tokens]]` table of its first host)."""
    data = _base(files)
    hosts, repos = data["hosts"], data["repos"]
    assert isinstance(hosts, list) and isinstance(repos, list)
    if section == "tokens":
        hosts[0]["tokens"] = [{"repos": ["o/*"], "token_env": "T"}]
        table = hosts[0]["tokens"][0]
    elif section in ("hosts", "repos"):
        table = (hosts if section == "hosts" else repos)[0]
    else:
        table = data.setdefault(section, {})
    assert isinstance(table, dict)
    table[key] = value
    return data


@pytest.mark.parametrize(("section", "key"), list(_keys()))
def test_each_bound_choice_and_wrong_type_of_a_known_key_is_read_as_the_models_read_it(
        files: Path, section: str, key: str) -> None:
    env = {"T": "glpat-env-token-value", "K": "sk-key", "bad name": "glpat-env-token-value",
           "ghp_Q1w2E3r4T5y6U7i8O9p0AsDf": "glpat-env-token-value"}
    for value in [*_bounds(_model_keys()[section], key), *WRONG_TYPES]:
        data = _with(files, section, key, value)
        fast = assert_equivalent(data, env)
        if value in _bounds(_model_keys()[section], key) and fast is None:
            with pytest.raises(ConfigError):  # the light reader leaves only refusals
                parse(data, env)


def _ruled(files: Path) -> dict[tuple[str, str], tuple[list[object], list[object]]]:
    """Keys whose rule is a function, not a bound or a choice: values it takes, values it
    refuses (`[review]` and `[web]`, settings/section_rules.py)."""
    return {
        ("review", "changes_requested_on"): ([[], ["critical"], ["warning", "suggestion"]],
                                             [["Critical"], ["critical", "nope"], ["blocker"]]),
        ("review", "notify_on"): ([[], ["approved"], ["changes_requested", "commented"]],
                                  [["approve"], ["commented", ""]]),
        ("review", "notify_command"): ([[], ["notify-send", "-"]], [["a", 1]]),
        ("review", "notify_url"): (["", "https://hook.example/x/", "http://127.0.0.1:9/h"],
                                   ["ftp://hook.example", "https://u:p@hook.example",
                                    "https://hook.example:99999", "http://", "hook"]),
        ("web", "trusted_header"): (["", "X-Forwarded-User", "x"],
                                    ["X_User", "-X", "X User", "X-Usér", "X:"]),
        ("web", "listen"): (["", "127.0.0.1:8470", "0.0.0.0:1"], []),
        ("web", "token_file"): (["", str(files / "webtok"), "webtok"],
                                [str(files / "short"), str(files / "latin1"),
                                 str(files / "missing"), str(files / "repos"), "short",
                                 "tok\x00"]),
    }


def test_each_rule_of_review_and_web_takes_what_the_models_take_and_leaves_the_rest(
        files: Path) -> None:
    """Whatever the light reader takes, the models take alike (and the web token is among
    the secrets); what they refuse, it leaves to them."""
    env = {"T": "glpat-env-token-value", "K": "sk-key", "CREDENTIALS_DIRECTORY": str(files)}
    for (section, key), (taken, refused) in _ruled(files).items():
        for value in taken:
            fast = assert_equivalent(_with(files, section, key, value), env)
            assert fast is not None, (section, key, value)
        for value in refused:
            data = _with(files, section, key, value)
            with pytest.raises(ConfigError):
                parse(data, env, secrets=True)
            assert light_parse(data, env) is None, (section, key, value)


def test_the_web_token_is_one_of_the_secrets_the_light_reader_hands_the_redactor(
        files: Path) -> None:
    data = _with(files, "web", "token_file", str(files / "webtok"))
    fast = light_parse(data, {"T": "glpat-env-token-value", "K": "sk-key"})
    assert fast is not None
    assert "web-sign-in-token-0123456789" in fast.secrets()


# ---- the files people have: they take the fast path ------------------------------------------
def _sandbox_config(tmp_path: Path) -> dict[str, object]:
    """The config `livereview sandbox` writes, for its four fake hosts as it serves them."""
    from livereview.cli.sandbox import files as sandbox_files
    from livereview.cli.sandbox import samples

    served = [samples.gitlab("t" * 20)[1], samples.github("t" * 20),
              samples.bitbucket_cloud("t" * 20), samples.bitbucket_dc("t" * 20)]
    try:
        return sandbox_files.config(tmp_path, served, "http://127.0.0.1:9/v1")
    finally:
        for sample in served:
            sample.server.stop()


def _bench_config() -> str:
    """bench/fig_startup.py's CONFIG (the bench's modules import each other from bench/)."""
    tree = ast.parse((ROOT / "bench/fig_startup.py").read_text("utf-8"))
    found = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                 and [getattr(t, "id", None) for t in node.targets] == ["CONFIG"])
    text = ast.literal_eval(found)
    assert isinstance(text, str)
    return text


def test_the_files_init_sandbox_and_the_bench_write_are_read_without_the_models(
        tmp_path: Path) -> None:
    env = {"LIVEREVIEW_GITLAB_TOKEN": "glpat-x" * 3, "OPENAI_API_KEY": "sk-x",
           "BENCH_TOKEN": "t" * 20}
    example = tomllib.loads((ROOT / "daemon/livereview/example.toml").read_text("utf-8"))
    bench = tomllib.loads(_bench_config().format(db=tmp_path / "s.db",
                                                 gitlab="http://127.0.0.1:9"))
    sandbox = tomllib.loads(tomli_w.dumps(_sandbox_config(tmp_path)))
    for document in (example, bench, sandbox):
        assert assert_equivalent(document, env) is not None


def _examples() -> Iterator[str]:
    """Every TOML example in the docs, and every TOML file of the tests' fixtures."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        yield from re.findall(r"```toml\n(.*?)```", page.read_text("utf-8"), re.DOTALL)
    for file in sorted((ROOT / "tests/fixtures").rglob("*.toml")):
        yield file.read_text("utf-8")


@pytest.mark.parametrize("text", list(_examples()))
def test_every_example_config_of_the_docs_is_read_alike(files: Path, text: str) -> None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        pytest.skip("a fragment, not a document")
    env = dict.fromkeys(re.findall(r"[A-Z_]{3,}", text), "glpat-env-token-value")
    assert_equivalent({**_base(files), **data}, {**env, "K": "sk-key", "T": "t"})
