"""[answers] and [knowledge] (docs/DESIGN.md §10.1): validated like the rest, one-line errors, and
the repo's own keys over the global ones."""

from __future__ import annotations

from typing import Any

import pytest

from livereview.settings import ConfigError, parse

ENV = {"T": "x", "OPENAI_API_KEY": "k"}
HOST = {"name": "gl", "type": "gitlab", "url": "https://gitlab.example", "token_env": "T"}


def config(**sections: Any) -> dict[str, Any]:
    repos = sections.pop("repos", [{"host": "gl", "path": "acme/app"}])
    return {"hosts": [HOST], "repos": repos, **sections}


@pytest.mark.parametrize(("data", "message"), [
    (config(answers={"tone": "chatty"}),
     "answers.tone: expected concise or thorough, got 'chatty'"),
    (config(answers={"concede": "always"}),
     "answers.concede: expected with_evidence or when_convinced, got 'always'"),
    (config(answers={"languages": ["English", ""]}),
     "answers.languages: expected language names such as \"English\", got ''"),
    (config(answers={"context_budget_tokens": 10}),
     "answers.context_budget_tokens: must be >= 500, got 10"),
    (config(answers={"max_lenght": 10}), "answers.max_lenght: unknown key"),
    (config(repos=[{"host": "gl", "path": "a/b", "answers": {"max_chars": 99}}]),
     "repos[0].answers.max_chars: must be >= 100, got 99"),
    (config(knowledge={"groups": [{"host": "gh", "path": "acme"}]}),
     "knowledge.groups[0].host: no [[hosts]] named 'gh'"),
    (config(knowledge={"groups": [{"host": "gl", "path": "/"}]}),
     "knowledge.groups[0].path: is required"),
    (config(knowledge={"global": [42]}),
     'knowledge.global[0]: expected a repo path, a URL, or { title = "…", text = "…" }'),
    (config(knowledge={"everywhere": []}), "knowledge.everywhere: unknown key"),
])
def test_errors_are_one_line_naming_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(data, ENV)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_repo_overrides_only_the_keys_it_sets() -> None:
    settings = parse(config(answers={"max_chars": 3000, "tone": "thorough"}, repos=[
        {"host": "gl", "path": "acme/app", "answers": {"tone": "concise"}},
        {"host": "gl", "path": "beta/lib"}]), ENV)
    own = settings.answers_for("gl", "acme/app")
    assert (own.tone, own.max_chars) == ("concise", 3000)
    assert settings.answers_for("gl", "beta/lib").tone == "thorough"


def test_knowledge_is_keyed_by_scope_as_lessons_are() -> None:
    settings = parse(config(repos=[{"host": "gl", "path": "acme/app", "knowledge": ["A.md"]}],
                            knowledge={"global": ["https://wiki/x"], "groups": [
                                {"host": "gl", "path": "acme/", "entries": ["G.md"]},
                                {"host": "gl", "path": "acme", "entries": [
                                    {"title": "t", "text": "x"}]}]}), ENV)
    assert settings.knowledge_sources() == {
        "repo:gl:acme/app": ("A.md",), "group:gl:acme": ("G.md", ("t", "x")),
        "global": ("https://wiki/x",)}
