"""The quick-action oracle extracts what GitLab's extractor extracts: the examples of its
own specs (gitlab-org/gitlab spec/lib/gitlab/quick_actions/extractor_spec.rb and
spec/lib/banzai/pipeline/quick_action_pipeline_spec.rb), ported. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from tests.quick_actions_oracle import (
    Command,
    commands,
    paragraph_commands,
    quick_action_paragraphs,
    regex_v1_commands,
    regex_v2_commands,
)

# The spec's definitions: command(:reopen, :open, :close), :assign, :labels, :power;
# substitutions :substitution and :shrug; :noop_command is a no-op (not extracted).
NAMES = ("reopen", "open", "close", "assign", "labels", "power", "substitution", "shrug")
Extractor = Callable[[str, Sequence[str] | None], list[Command]]
GENERATIONS: list[Extractor] = [regex_v1_commands, regex_v2_commands, paragraph_commands]

SPEC_EXAMPLES: list[tuple[str, list[Command]]] = [
    ("/reopen\nworld", [("reopen",)]),
    ("hello\n/reopen\nworld", [("reopen",)]),
    ("hello\nworld /reopen", []),
    ("hello\n/reopen", [("reopen",)]),
    ("/assign @joe\nworld", [("assign", "@joe")]),
    ("/assign @joe / @jane\nworld", [("assign", "@joe / @jane")]),
    ("hello\n/assign @joe\nworld", [("assign", "@joe")]),
    ("hello\nworld /assign @joe", []),
    ("hello\n/assign @joe", [("assign", "@joe")]),
    ("hello\n/assign@joe\nworld", []),
    ('/labels ~foo ~"bar baz" label\nworld', [("labels", '~foo ~"bar baz" label')]),
    ('hello\n/labels ~foo ~"bar baz" label\nworld', [("labels", '~foo ~"bar baz" label')]),
    ('hello\nworld /labels ~foo ~"bar baz" label', []),
    ('hello\n/labels~foo ~"bar baz" label\nworld', []),
    ('hello\n/power @user.name %9.10 ~"bar baz.2"\nworld',
     [("power", '@user.name %9.10 ~"bar baz.2"')]),
    ('hello\n/PoWer @user.name %9.10 ~"bar baz.2"\nworld',
     [("power", '@user.name %9.10 ~"bar baz.2"')]),
    ("hello\nworld\n/reopen\n/noop_command", [("reopen",)]),
    ("hello\nworld\n/reopen\n/shrug this is great?", [("reopen",), ("shrug", "this is great?")]),
    ("hello\nworld\n/reOpen\n/sHRuG this is great?", [("reopen",), ("shrug", "this is great?")]),
    ('hello\n/power @user.name %9.10 ~"bar baz.2" label\nworld\n/reopen',
     [("power", '@user.name %9.10 ~"bar baz.2" label'), ("reopen",)]),
    ("Fixes #123", []),
    ("Hello\r\n```\r\nThis is some text\r\n/close\r\n/assign @user\r\n```\r\n\r\nWorld", []),
    ("Hello\r\n>>>\r\nThis is some text\r\n/close\r\n/assign @user\r\n>>>\r\n\r\nWorld", []),
    ("Hello\r\n<div>\r\nThis is some text\r\n/close\r\n/assign @user\r\n</div>\r\n\r\nWorld", []),
]
# Examples of the later specs only (regex v2 and the paragraph pipeline): the first
# generation's `^.*`…`$` inline-code rule swallows from the first backtick on.
LATER_SPEC_EXAMPLES: list[tuple[str, list[Command]]] = [
    ("hello\nworld\n/reopen\n`/tableflip this is great`?", [("reopen",)]),
    ("/reopen\n`some inline code`\n/labels ~a\n`more inline code`",
     [("reopen",), ("labels", "~a")]),
    ("Hello\r\n`\r\nThis is some text\r\n/close\r\n/assign @user\r\n`\r\n\r\nWorld", []),
    ("Hello `This is some text\r\n/close\r\n/assign @user\r\n`\r\n\r\nWorld", []),
    ("/reopen\n```\nsome blockcode\n```\n/labels ~a\n```\nmore blockcode\n```",
     [("reopen",), ("labels", "~a")]),
    ("`This is some text\r\n/close\r\n/assign @user\r\n`\r\n\r\nWorld", []),
]


@pytest.mark.parametrize("generation", GENERATIONS, ids=lambda g: g.__name__)
@pytest.mark.parametrize(("body", "expected"), SPEC_EXAMPLES)
def test_the_oracle_extracts_what_gitlabs_spec_says(
        generation: Extractor, body: str, expected: list[Command]) -> None:
    assert generation(body, NAMES) == expected


@pytest.mark.parametrize("generation", GENERATIONS[1:], ids=lambda g: g.__name__)
@pytest.mark.parametrize(("body", "expected"), LATER_SPEC_EXAMPLES)
def test_the_later_generations_skip_inline_code_as_their_spec_says(
        generation: Extractor, body: str, expected: list[Command]) -> None:
    assert generation(body, NAMES) == expected


@pytest.mark.parametrize(("body", "paragraphs"), [
    ("<!-- HTML comment -->\nA paragraph\n\n> a blockquote", []),
    ("<!-- HTML comment -->\n/quick\n\n> a blockquote", [(1, 1)]),
    ("Lorem ipsum\n/quick\n/action\n\n>>>\n/quick\n>>>\n\n/action", [(0, 2), (8, 8)]),
    ("```\nLorem ipsum\n/quick\n/action\n```", []),
    ('<p data-sourcepos="0:1-2:10">\n/quick\n</p>', []),
])
def test_the_paragraphs_are_those_gitlabs_pipeline_spec_finds(
        body: str, paragraphs: list[tuple[int, int]]) -> None:
    assert quick_action_paragraphs(body) == paragraphs


@pytest.mark.parametrize(("body", "gitlab_would_run"), [
    ("~~~\n/merge\n~~~", True),           # only ``` counts as a fence (regex generations)
    ("    ```\n/merge\n    ```", True),   # an indented fence
    ("<!--\n/merge\n-->", True),          # an HTML comment is no `<tag>` line
    ("````\n/merge\n```", False),        # backtick pairs: skipped as inline code
    ("```\n/merge\n``` x", True),         # closing fence with trailing text
    ("```\n/merge", True),                # unclosed fence
    ("<pre>/x\n/merge\n</pre>", True),    # the tag's line holds text
    ("text\n    /merge", False),          # a command starts in column 0
    ("```\n/merge\n```", False),
    ("hello\n/merge now", True),
    ("hello\n/cloſe", True),              # Ruby's /i folds ſ to s
])
def test_the_oracle_reads_fences_the_way_gitlabs_regex_does(
        body: str, gitlab_would_run: bool) -> None:
    assert bool(commands(body)) is gitlab_would_run


# Ruby 3.1's Onigmo, run on these lines with GitLab's command regex: `%r{^/(?<cmd>assign|…)…}mix`
# matched each, `cmd` as written; `[a-z0-9_]+` under /i matched none of them.
MULTI_FOLDED = [("/aßign @x", ("assign",), [("aßign", "@x")]),
                ("/unaẞign @x", ("unassign",), [("unaßign", "@x")]),
                ("/eﬆimate 1h", ("estimate",), [("eﬆimate", "1h")]),
                ("/tableﬂip", ("tableflip",), [("tableﬂip",)])]


@pytest.mark.parametrize("generation", GENERATIONS, ids=lambda g: g.__name__)
@pytest.mark.parametrize(("body", "names", "expected"), MULTI_FOLDED)
def test_a_letter_ruby_folds_into_two_of_a_name_is_extracted_for_that_name(
        generation: Extractor, body: str, names: tuple[str, ...], expected: list[Command]
) -> None:
    assert generation(body, names) == expected
    assert generation(body, None) == []
