"""Comments in changed code that open a review thread: 💡 explains, ❓ asks, TODO, FIXME.

Pure: a file's unified diff in, notes out. Only added lines count (a note someone removed
is not a new conversation). The comment syntaxes are chosen by the file's extension, so
`#include` in C or `x--` in JavaScript never reads as a comment; a file type we do not know
gets every syntax. Quotes are followed roughly, so `"# not a comment"` stays code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from livereview.core.local_model import ThreadKind

HASH, SLASH, BLOCK, DASH, HTML = "#", "//", "/*", "--", "<!--"
_CLOSE = {BLOCK: "*/", HTML: "-->"}
_C_LIKE = (SLASH, BLOCK)
_BY_SUFFIX: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("py", "sh", "bash", "zsh", "rb", "pl", "yaml", "yml", "toml", "r",
                     "cfg", "ini", "conf", "mk", "nix", "ex", "exs", "cmake", "tf", "ps1"),
                    (HASH,)),
    **dict.fromkeys(("c", "h", "cc", "cpp", "hpp", "cs", "java", "js", "mjs", "cjs", "jsx",
                     "ts", "tsx", "go", "rs", "swift", "kt", "kts", "scala", "dart", "proto",
                     "zig", "groovy", "scss", "less"), _C_LIKE),
    "php": (SLASH, BLOCK, HASH),
    "css": (BLOCK,),
    **dict.fromkeys(("sql", "lua", "hs", "elm", "ada", "vhdl"), (DASH, BLOCK)),
    **dict.fromkeys(("html", "htm", "xml", "xhtml", "svg", "md", "markdown", "vue", "svelte"),
                    (HTML,)),
}
_BY_NAME = {"Makefile": (HASH,), "Dockerfile": (HASH,), "CMakeLists.txt": (HASH,)}
_EVERY = (HTML, BLOCK, SLASH, DASH, HASH)  # longest opening first
_MARKERS = re.compile(r"(💡|❓\ufe0f?|(?<![A-Za-z0-9_])(?:TODO|FIXME)(?![A-Za-z0-9_]))")
_KINDS = {"💡": ThreadKind.EXPLANATION, "❓": ThreadKind.QUESTION, "TODO": ThreadKind.TODO,
          "FIXME": ThreadKind.FIXME}
_LEAD = " \t:-–—,.!*"


@dataclass(frozen=True, slots=True)
class CodeNote:
    kind: ThreadKind
    path: str
    line: int  # in the new file
    text: str  # what the comment says after its marker
    code: str  # the whole line, to find it again after new commits


def syntaxes_for(path: str) -> tuple[str, ...]:
    name = PurePosixPath(path).name
    if name in _BY_NAME:
        return _BY_NAME[name]
    suffix = PurePosixPath(path).suffix.lstrip(".").lower()
    return _BY_SUFFIX.get(suffix, _EVERY)


def comments_in(line: str, syntaxes: tuple[str, ...],
                open_block: str | None = None) -> tuple[list[str], str | None]:
    """The comment texts on one line, and the block comment still open after it (its
    closing token), given the one open before it."""
    texts: list[str] = []
    i = 0
    if open_block is not None:
        end = line.find(open_block)
        if end < 0:
            return [line], open_block
        texts.append(line[:end])
        i, open_block = end + len(open_block), None
    ordered = [s for s in _EVERY if s in syntaxes]
    quote = ""
    track_quotes = HTML not in syntaxes  # prose ("don't") is no string
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if char == quote:
                quote = ""
            i += 1
            continue
        if track_quotes and char in "\"'`":
            quote = char
            i += 1
            continue
        opening = next((s for s in ordered if line.startswith(s, i)), None)
        if opening is None:
            i += 1
            continue
        start = i + len(opening)
        if opening not in _CLOSE:
            texts.append(line[start:])
            break
        close = _CLOSE[opening]
        end = line.find(close, start)
        if end < 0:
            texts.append(line[start:])
            return texts, close
        texts.append(line[start:end])
        i = end + len(close)
    return texts, None


def note_in(text: str) -> tuple[ThreadKind, str] | None:
    """The kind and words of a marked comment (the first marker decides)."""
    match = _MARKERS.search(text)
    if match is None:
        return None
    kind = _KINDS[match.group(1).rstrip("\ufe0f")]
    words = text[match.end():]
    if words.startswith("("):  # TODO(alice): …
        words = words.partition(")")[2]
    words = words.strip(_LEAD).rstrip("*/ ").strip()
    return kind, words or text.strip(_LEAD)


def _target_path(target: str, parsed: str) -> str:
    """The exact path of a diff's `+++ b/PATH` (the diff is made with the b/ prefix): git
    C-quotes a name holding a control character, a quote or a backslash ("b/a\\tb.py"),
    which the diff parser leaves quoted; unquoted here as git does."""
    name = _unquoted(target) if target.startswith('"') else target
    return name[2:] if name is not None and name.startswith("b/") else parsed


_C_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34}


def _unquoted(quoted: str) -> str | None:
    """git's `unquote_c_style` (quote.c), ported: the bytes between the double quotes, with
    \\a \\b \\f \\n \\r \\t \\v \\\\ \\" and three-digit octal escapes (first digit 0-3)
    undone; None if it is not such a string."""
    out = bytearray()
    text = quoted[1:]
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode("utf-8", "surrogateescape") if i == len(text) - 1 else None
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        escape = text[i + 1:i + 2]
        if escape in _C_ESCAPES:
            out.append(_C_ESCAPES[escape])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", text[i + 1:i + 4]):
            out.append(int(text[i + 1:i + 4], 8))
            i += 4
        else:
            return None
    return None


def extract(file_diff: str) -> list[CodeNote]:
    """Notes on the added lines of one file's (or several files') unified diff."""
    try:
        patch = PatchSet(file_diff)
    except UnidiffParseError:
        return []
    notes: list[CodeNote] = []
    for patched in patch:
        if patched.is_removed_file or patched.is_binary_file:
            continue
        path = _target_path(patched.target_file, patched.path)
        syntaxes = syntaxes_for(path)
        for hunk in patched:
            open_block: str | None = None
            for line in hunk:
                if line.is_removed:
                    continue
                text = line.value.rstrip("\r\n")
                comments, open_block = comments_in(text, syntaxes, open_block)
                if not line.is_added or line.target_line_no is None:
                    continue
                for comment in comments:
                    found = note_in(comment)
                    if found is not None:
                        notes.append(CodeNote(found[0], path, line.target_line_no,
                                              found[1], text))
                        break
    return notes


def reanchor(lines: Sequence[str], code: str, near: int | None) -> int | None:
    """The 1-based line of `lines` holding `code` again (leading and trailing blanks aside),
    the one closest to where it was when it appears several times; None when it is gone."""
    wanted = code.strip()
    if not wanted:
        return None
    found = [i + 1 for i, line in enumerate(lines) if line.strip() == wanted]
    if not found:
        return None
    return min(found, key=lambda n: (abs(n - near), n) if near is not None else (0, n))
