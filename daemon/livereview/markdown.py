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
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Inside these elements text is not prose: hosts do not make mentions there.
_NOT_PROSE_TAGS = frozenset({"code", "pre", "a", "blockquote", "kbd", "samp", "script", "style"})
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "wbr", "area", "col", "embed", "source"})


@functools.cache
def _parser() -> MarkdownIt:
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


def prose(body: str) -> str:
    """The text of `body` a person wrote as prose (what a host scans for mentions)."""
    out: list[str] = []
    quoted = 0
    for token in _parser().parse(body):
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


def code_lines(text: str) -> set[int]:
    """Indexes of the lines of `text` that lie in fenced or indented code blocks."""
    lines: set[int] = set()
    for token in _parser().parse(text):
        if token.type in ("fence", "code_block") and token.map is not None:
            lines.update(range(token.map[0], token.map[1]))
    return lines


def open_fence(text: str) -> str | None:
    """The fence that would close a code block left open at the end of `text` (a cut
    answer), or None when every block is closed."""
    tokens = [t for t in _parser().parse(text) if t.type == "fence" and t.map is not None]
    if not tokens:
        return None
    last = tokens[-1]
    assert last.map is not None
    body = text.splitlines()[last.map[0]: last.map[1]]
    closing = body[-1].strip() if len(body) > 1 else ""
    marker = last.markup
    if closing.startswith(marker) and set(closing) <= {marker[0]}:
        return None
    return marker
