"""What a comment says as prose, and where its code is: Markdown read the way hosts read it.

GitLab and GitHub render comments as CommonMark (plus extensions that do not matter here)
and turn `@name` into a mention only in prose: not in code blocks or spans, not inside
links, not in HTML comments. A blockquote is someone else's words being quoted, so a
mention there does not summon the bot either (docs/DESIGN.md §5). markdown-it-py is a CommonMark
parser, so what it calls code is what the hosts call code — hand-written line rules were
not (an indented block, `<code>` or a quote nested in a list fooled them). Pure.
"""

from __future__ import annotations

import functools
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is loaded when first used (below)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Inside these elements text is not prose: hosts do not make mentions there.
_NOT_PROSE_TAGS = frozenset({"code", "pre", "a", "blockquote", "kbd", "samp", "script", "style"})
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "wbr", "area", "col", "embed", "source"})


@functools.cache
def _parser() -> MarkdownIt:
    """Imported on first use: a command that only prints comments (`mr comments`) never
    parses Markdown, and markdown-it-py is some 60 modules (bench figure 17)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


class _HtmlProse(HTMLParser):
    """The text of raw HTML outside code, links and quotes (comments are never text)."""

    def __init__(self, depth: int = 0) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = depth  # how many non-prose elements we are inside
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _NOT_PROSE_TAGS:
            self.depth += 1
        elif tag not in _VOID_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _NOT_PROSE_TAGS:
            self.depth = max(0, self.depth - 1)
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.parts.append(data)


def _inline_prose(children: list[Token], out: list[str]) -> None:
    html = _HtmlProse()  # tracks <code>…</code> written as inline HTML across tokens
    link_depth = 0
    for child in children:
        if child.type == "link_open":
            link_depth += 1
        elif child.type == "link_close":
            link_depth = max(0, link_depth - 1)
        elif child.type == "html_inline":
            html.feed(child.content)
            out.append(" ")
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "text" and link_depth == 0 and html.depth == 0:
            out.append(child.content)
        else:  # code spans, images, and text inside links or <code>
            out.append(" ")


# GitLab's multi-line quote: a line of only `>>>` opens it, the next such line closes it.
_QUOTE_FENCE = re.compile(r" {0,3}>>>[ \t]*")


def _without_gitlab_quotes(body: str) -> str:
    """`body` with GitLab's `>>>` … `>>>` quotes blanked (one left open runs to the end, as
    a fence does). A delimiter inside a code block delimits nothing. Other hosts read the
    delimiter as an empty quote and the lines after it as prose; reading them as a quote
    everywhere only means a mention there does not summon the bot — the safe side."""
    lines = body.split("\n")
    delimiters = {i for i, line in enumerate(lines) if _QUOTE_FENCE.fullmatch(line)}
    if not delimiters:
        return body
    in_code: set[int] = set()
    for token in _parser().parse(body):
        if token.type in ("fence", "code_block") and token.map is not None:
            in_code.update(range(*token.map))
    quoting = False
    for i in range(len(lines)):
        if i in delimiters and i not in in_code:
            quoting = not quoting
            lines[i] = ""
        elif quoting:
            lines[i] = ""
    return "\n".join(lines)


def prose(body: str) -> str:
    """The text of `body` a person wrote as prose (what a host scans for mentions)."""
    out: list[str] = []
    quoted = 0
    for token in _parser().parse(_without_gitlab_quotes(body)):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif quoted:
            continue
        elif token.type == "inline" and token.children is not None:
            _inline_prose(token.children, out)
            out.append("\n")
        elif token.type == "html_block":
            reader = _HtmlProse()
            reader.feed(token.content)
            reader.close()
            out.extend([*reader.parts, "\n"])
    return "".join(out)


# Lines that may start an HTML block reaching over blank lines, and GitLab's `>>>` quote
# delimiter: where they appear, no line is known for certain to be code.
_LONG_HTML = re.compile(r"^ {0,3}<(?:pre|script|style|textarea|[!?])", re.IGNORECASE | re.MULTILINE)
_GITLAB_QUOTE = re.compile(r"^>>>", re.MULTILINE)
_OPENING = re.compile(r"^(`{3,}|~{3,})(.*)$")


def _plain_fences(lines: list[str]) -> set[int]:
    """Fenced blocks no CommonMark flavour reads otherwise: at column 0, after a blank
    line (no paragraph, quote, list or HTML block to fold it into), closed by a matching
    fence at column 0 (or left open to the end)."""
    code: set[int] = set()
    i, after_blank = 0, True
    while i < len(lines):
        opening = _OPENING.match(lines[i])
        info_ok = opening is not None and not (opening.group(1)[0] == "`" and "`" in opening[2])
        if opening and info_ok and after_blank:
            fence = opening.group(1)
            closing = re.compile(rf"{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
            end = next((j for j in range(i + 1, len(lines)) if closing.fullmatch(lines[j])),
                       len(lines) - 1)
            code.update(range(i, end + 1))
            i, after_blank = end + 1, False
            continue
        after_blank = not lines[i].strip()
        i += 1
    return code


def code_lines(text: str) -> set[int]:
    """Indexes of the lines of `text` (split on "\n") that every host renders as code.

    Hosts parse Markdown with their own engines (cmark-gfm on GitHub, comrak with GitLab's
    extensions), which disagree with each other and with markdown-it at the edges — a
    link definition before an indented line, an HTML line after a quote, GitLab's `>>>`.
    A line counts as code only when it is in a plain fenced block *and* markdown-it agrees;
    anything less certain is prose, where a mention must be defused."""
    if _LONG_HTML.search(text) or _GITLAB_QUOTE.search(text):
        return set()
    lines = text.split("\n")
    plain = _plain_fences(lines)
    if not plain:
        return set()
    agreed: set[int] = set()
    for token in _parser().parse(text):
        if token.type == "fence" and token.map is not None and token.level == 0:
            agreed.update(range(token.map[0], token.map[1]))
    return plain & agreed


def _ends_open(text: str) -> bool:
    """Would a line appended after a blank line be swallowed by a block still open at the
    end of `text` (an unclosed code block)? Asked of markdown-it with a probe line."""
    probe = "<!-- end -->"
    last = _parser().parse(f"{text}\n\n{probe}")[-1]
    return not (last.type == "html_block" and last.level == 0
                and last.content.startswith(probe))


def open_fence(text: str) -> str | None:
    """The line that closes a code block left open at the end of `text` (a cut answer, or a
    model's), so that what follows is not code; None when nothing is open."""
    if not _ends_open(text):
        return None
    fences = [t.markup for t in _parser().parse(text) if t.type == "fence"]
    for closing in dict.fromkeys([*reversed(fences), "```", "~~~"]):
        if not _ends_open(f"{text}\n{closing}"):
            return closing
    return None
