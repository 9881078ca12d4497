"""What code a question names, and where that code is. Pure.

A question names code three ways: `src/cache.py:42` (a place), `src/cache.py` (a file) and
`get_user` or `CacheLock` (a symbol). Names are read where the asker wrote them — prose and
code spans, not a blockquote (someone else's words) nor a pasted code block (the asker's
own code, full of names nobody asked about). Symbols are found by a plain,
language-agnostic search for a definition line (`def|class|func|fn|function|struct|…`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

MAX_PLACES = 5
MAX_SYMBOLS = 5
REGION_LINES = 12  # either side of a referenced line
DEFINITION_LINES = 40
MAX_PATH = 300

_PLACE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z][\w]{0,9})"
                    r"(?::(\d{1,7})(?:-(\d{1,7}))?)?(?![\w/])")
# Not after `@` (a username: `@alice_b`), `.`, `/` or `-` (part of a path or a URL).
_IDENTIFIER = re.compile(r"(?<![\w.$/@-])([A-Za-z_][A-Za-z0-9_]{2,80})(?:\(\))?(?![\w/])")
# Words that look like identifiers but name no symbol of the MR.
_COMMON = frozenset({"livereview", "self", "this", "None", "null", "true", "false", "True",
                     "False", "TODO", "FIXME", "README", "http", "https"})


@dataclass(frozen=True)
class Place:
    """A file, or a line (range) of it, the question names."""

    path: str
    line: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Named:
    places: tuple[Place, ...]
    symbols: tuple[str, ...]


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def asked_text(body: str) -> tuple[str, str]:
    """(prose, code spans) of `body` outside blockquotes and code blocks."""
    prose: list[str] = []
    spans: list[str] = []
    quoted = 0
    for token in _parser().parse(body):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif not quoted and token.type == "inline" and token.children is not None:
            for child in token.children:
                if child.type == "text":
                    prose.append(child.content)
                elif child.type == "code_inline":
                    spans.append(child.content)
            prose.append("\n")
    return " ".join(prose), "\n".join(spans)


def _symbolish(word: str, in_code: bool) -> bool:
    """Does `word` read as a code name? In a code span any identifier does; in prose only
    one an English word would not be (snake_case, camelCase, a call `name()`)."""
    if word in _COMMON or word.isdigit():
        return False
    if in_code:
        return True
    return "_" in word.strip("_") or bool(re.search(r"[a-z][A-Z]", word))


def named_in(body: str) -> Named:
    """The places and symbols `body` names, in the order it names them (bounded)."""
    prose, spans = asked_text(body)
    places: dict[Place, None] = {}
    symbols: dict[str, None] = {}
    for text, in_code in ((spans, True), (prose, False)):
        for match in _PLACE.finditer(text):
            path = match.group(1).lstrip("./")
            if len(path) > MAX_PATH or ("/" not in path and "." not in path[:-1]):
                continue  # a path longer than any repo has is not one (nor a request)
            line = int(match.group(2)) if match.group(2) else None
            end = int(match.group(3)) if match.group(3) and line else None
            places[Place(path, line, end if end and end >= (line or 0) else None)] = None
        stripped = _PLACE.sub(" ", text)
        for match in _IDENTIFIER.finditer(stripped):
            word = match.group(1)
            called = match.group(0).endswith("()")
            if called or _symbolish(word, in_code):
                symbols[word] = None
    return Named(tuple(places)[:MAX_PLACES], tuple(symbols)[:MAX_SYMBOLS])


def region(text: str, place: Place, around: int = REGION_LINES) -> str | None:
    """The lines of a file around `place` (numbered, the named lines marked `>>`); the head
    of the file when no line is named; None when the line is past the end."""
    lines = text.splitlines()
    if place.line is None:
        first, last, marked = 1, min(len(lines), 2 * around), range(0)
    else:
        end = min(place.end or place.line, place.line + 4 * around)
        if place.line > len(lines) or place.line < 1:
            return None
        first, last = max(1, place.line - around), min(len(lines), end + around)
        marked = range(place.line, end + 1)
    return "\n".join(f"{'>>' if n in marked else '  '}{n:>5} {lines[n - 1]}"
                     for n in range(first, last + 1))


def _definition_pattern(name: str) -> re.Pattern[str]:
    keywords = r"def|class|func|fn|function|struct|interface|type|enum|trait|module|macro"
    modifiers = r"(?:(?:export|default|pub(?:\([\w:]+\))?|async|static|public|private|" \
                r"protected|abstract|final|inline|unsafe|const|extern)\s+)*"
    go_receiver = r"(?:\([^)]*\)\s*)?"
    return re.compile(rf"^([ \t]*){modifiers}(?:{keywords})\s+{go_receiver}{re.escape(name)}"
                      rf"(?![\w])", re.MULTILINE)


def definition(text: str, name: str, max_lines: int = DEFINITION_LINES) -> str | None:
    """The definition of `name` in `text`: from its line until the code returns to its
    indentation (a closing brace or `end` included), at most `max_lines`, numbered."""
    match = _definition_pattern(name).search(text)
    if match is None:
        return None
    first = text.count("\n", 0, match.start()) + 1
    lines = text.splitlines()[first - 1: first - 1 + max_lines]
    indent = len(match.group(1).expandtabs())
    kept = [lines[0]]
    for line in lines[1:]:
        stripped, width = line.strip(), len(line.expandtabs()) - len(line.expandtabs().lstrip())
        if not stripped or width > indent:
            kept.append(line)
            continue
        closing = stripped[0] in ")]}" or stripped in ("end", "end;")
        if closing:
            kept.append(line)
        # Back at the definition's level: it ended — unless this closes a multi-line
        # signature (`) -> int:`, `) {`).
        if not (closing and stripped.endswith((":", "{"))):
            break
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(f"{n:>5} {line}" for n, line in enumerate(kept, first))
