"""File paths shown to a model and to people: two paths are never shown alike, the shown
form gives the exact path back, and an answer naming either form lands on that file."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.findings import parse_findings
from livereview.core.model import FileChange, FileStatus
from livereview.core.sanitize import shown_path
from livereview.review import prompt
from tests.factories import mr

PATHS = st.text(
    st.characters(codec="utf-8", exclude_characters="\0")
    | st.sampled_from(' \t\n\r\x1b\u202e\u200b"\\\udcff'),
    max_size=30,
)


def exact(shown: str) -> str:
    """What a reader (a JSON parser, a person) takes the shown form to mean."""
    value: str = json.loads(shown) if shown.startswith('"') else shown
    return value


@given(PATHS)
def test_the_shown_form_of_a_path_means_exactly_that_path(path: str) -> None:
    assert exact(shown_path(path)) == path


@given(PATHS, PATHS)
def test_two_different_paths_are_never_shown_alike(one: str, other: str) -> None:
    assert (shown_path(one) == shown_path(other)) == (one == other)


@given(PATHS)
def test_a_shown_path_is_one_printable_line_with_nothing_invisible_at_its_ends(path: str) -> None:
    shown = shown_path(path)
    assert shown.isprintable()
    assert shown == shown.strip()


def test_plain_paths_are_shown_as_they_are() -> None:
    assert [shown_path(p) for p in ("a.py", "src/a b.py", "é/ü.py")] == [
        "a.py",
        "src/a b.py",
        "é/ü.py",
    ]
    assert [shown_path(p) for p in ("a.py ", "a\tb.py", "a\nb.py", "a  b.py")] == [
        '"a.py "',
        '"a\\tb.py"',
        '"a\\nb.py"',
        '"a  b.py"',
    ]


def change(path: str) -> FileChange:
    return FileChange(path, path, FileStatus.ADDED, 1, 0)


TWINS = [change("a.py"), change("a.py "), change("a\tb.py"), change("a b.py")]


def test_the_review_prompt_shows_files_differing_in_whitespace_apart() -> None:
    built = prompt.build(mr(), [(c, "@@ -0,0 +1 @@\n+x = 1\n") for c in TWINS])
    headers = [line for line in built.user.splitlines() if line.startswith(prompt.FILE_HEADER)]
    assert [h.removeprefix(prompt.FILE_HEADER).split(" (added")[0] for h in headers] == [
        "a.py",
        '"a.py "',
        '"a\\tb.py"',
        "a b.py",
    ]


def test_a_finding_lands_on_the_file_it_names_exactly_or_as_shown() -> None:
    names = prompt.names(TWINS)
    answer = json.dumps(
        {
            "findings": [
                {"severity": "critical", "path": "a.py ", "line": 1, "body": "on the spaced one"},
                {
                    "severity": "critical",
                    "path": '"a\\tb.py"',
                    "line": 1,
                    "body": "on the tabbed one, as shown",
                },
                {"severity": "critical", "path": "a.py", "line": 1, "body": "on the plain one"},
            ]
        }
    )
    parsed = parse_findings(answer, names)
    assert [(names[f.path].new_path, f.body) for f in parsed.findings] == [
        ("a.py ", "on the spaced one"),
        ("a\tb.py", "on the tabbed one, as shown"),
        ("a.py", "on the plain one"),
    ]


def test_a_name_two_files_could_answer_to_belongs_to_neither() -> None:
    names = prompt.names([change('"a.py "'), change("a.py ")])
    assert '"a.py "' not in names  # the first's path is the second's shown form
    assert names["a.py "].new_path == "a.py "
    assert names['"\\"a.py \\""'].new_path == '"a.py "'
