"""Marked comments in changed code → threads (pure; properties over generated lines)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.local_model import ThreadKind
from livereview.core.local_notes import extract, note_in, reanchor
from livereview.hosts.local.git import Git
from tests.local_repo import review_repo

MARKERS = {"💡": ThreadKind.EXPLANATION, "❓": ThreadKind.QUESTION, "TODO": ThreadKind.TODO,
           "FIXME": ThreadKind.FIXME}
# (file, opening, closing) for each comment syntax, in a language that uses it
SYNTAXES = [("x.py", "#", ""), ("x.ts", "//", ""), ("x.c", "/*", " */"), ("x.sql", "--", ""),
            ("x.html", "<!--", " -->")]
words = st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters=" ,?"),
                min_size=1, max_size=40).map(str.strip).filter(
    # words, not punctuation alone: a marker's leading and trailing ":-,." are trimmed
    lambda w: w and w[0].isalnum() and w[-1] not in ",." and not any(m in w for m in MARKERS))
code = st.sampled_from(["", "x = f(1)  ", "return a; ", "SELECT 1; ", "<p>hi</p> "])


def diff_adding(path: str, *lines: str, context: tuple[str, ...] = ()) -> str:
    body = "".join(f" {c}\n" for c in context) + "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,{len(context)} +1,{len(context) + len(lines)} @@\n{body}")


@given(st.sampled_from(SYNTAXES), st.sampled_from(sorted(MARKERS)), words, code)
def test_a_marked_comment_on_an_added_line_is_one_note(
        syntax: tuple[str, str, str], marker: str, text: str, before: str) -> None:
    path, opening, closing = syntax
    before = "" if path.endswith(".html") and before.strip() and "<" not in before else before
    line = f"{before}{opening} {marker}: {text}{closing}"
    notes = extract(diff_adding(path, "untouched = 0", line))
    assert [(n.kind, n.path, n.line, n.text, n.code) for n in notes] == [
        (MARKERS[marker], path, 2, text, line)]


@given(st.sampled_from(SYNTAXES), st.sampled_from(sorted(MARKERS)), words)
def test_a_marker_on_a_context_line_is_no_new_conversation(
        syntax: tuple[str, str, str], marker: str, text: str) -> None:
    path, opening, closing = syntax
    assert extract(diff_adding(path, "y = 2", context=(f"{opening} {marker} {text}{closing}",))
                   ) == []


@given(st.sampled_from(SYNTAXES), words)
def test_unmarked_comments_and_markers_in_strings_are_no_notes(
        syntax: tuple[str, str, str], text: str) -> None:
    path, opening, closing = syntax
    lines = [f"{opening} {text}{closing}", f"TODOS = FIXMES  {opening} {text}{closing}"]
    if not path.endswith(".html"):  # markup has no string literals, prose has apostrophes
        lines.append(f's = "{opening} TODO {text}"')
    assert extract(diff_adding(path, *lines)) == []


@given(st.text(max_size=300))
def test_any_text_is_survived(text: str) -> None:
    extract(text)
    extract(diff_adding("x.unknown", *text.splitlines()))
    note_in(text)


def test_a_block_comment_over_several_added_lines(tmp_path: Path) -> None:
    notes = extract(diff_adding("x.go", "/*", " * FIXME: retry on 503", " */", "func f() {}"))
    assert [(n.kind, n.line, n.text) for n in notes] == [(ThreadKind.FIXME, 2, "retry on 503")]


def test_comment_syntax_follows_the_language() -> None:
    # `#include` is C code, `x--` JavaScript code: neither is a comment there.
    assert extract(diff_adding("x.c", "#include <TODO.h>", "i--; // fine")) == []
    assert extract(diff_adding("x.js", "i-- TODO")) == []
    assert [n.text for n in extract(diff_adding("Makefile", "all: # TODO(bob): lint"))] == [
        "lint"]


def test_notes_of_a_real_range_in_four_languages(tmp_path: Path) -> None:
    git = Git.open(review_repo(tmp_path / "r").path)
    notes = extract(git.diff(git.resolve("HEAD~1")))
    assert sorted((n.path, n.line, n.kind.value, n.text) for n in notes) == [
        ("db/q.sql", 1, "todo", "index on email"),
        ("geo.py", 2, "explanation", "pi is close enough for the UI"),
        ("geo.py", 3, "todo", "math.pi"),
        ("page.html", 2, "fixme", "use the design system"),
        ("web/greet.ts", 2, "question", "should this trim the name?"),
        ("web/greet.ts", 3, "fixme", "i18n"),
    ]


@given(st.lists(st.sampled_from(["a", "b", "  c  ", ""]), max_size=30),
       st.integers(min_value=1, max_value=31))
def test_reanchor_finds_the_nearest_equal_line_or_none(lines: list[str], near: int) -> None:
    found = reanchor(lines, "c", near)
    places = [i + 1 for i, line in enumerate(lines) if line.strip() == "c"]
    if not places:
        assert found is None
    else:
        assert found in places
        assert abs(found - near) == min(abs(p - near) for p in places)
