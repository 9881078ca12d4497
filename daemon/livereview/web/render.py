"""Hostile text → HTML for the pages (DESIGN §11): every field is escaped; comment bodies are
Markdown without raw HTML; links only http(s); invisible and bidi-override characters are
dropped first (sanitize.clean), so a file name or a title cannot show other text than it is.

Diffs: one file's `git diff` → rows (old number, new number, kind, highlighted code), each
line highlighted by Pygments with classes only (the page's CSP allows no inline style).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from livereview.core.sanitize import clean

# The bot's marker for the host, not for a reader (as cli_local's text view drops it).
_MARKER = re.compile(r"\n*<!-- livereview:[\w:=.\-]+ -->\s*\Z")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_LINK_SCHEMES = ("http://", "https://")
MAX_JSON_DEPTH = 20

RowKind = Literal["hunk", "context", "add", "del", "note"]


def text(value: str) -> str:
    """A field as shown: without control, invisible and bidi-override characters."""
    return clean(value)


def _render_link_open(self: RendererHTML, tokens: Sequence[Token], idx: int,
                      options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


@functools.cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.disable("image")  # an image would load from anywhere: the CSP refuses, say it as text
    md.validateLink = lambda url: url.strip().lower().startswith(_LINK_SCHEMES)  # type: ignore[method-assign]
    md.add_render_rule("link_open", _render_link_open)
    return md


def markdown(body: str) -> Markup:
    """A message body: CommonMark, no raw HTML (shown as text), links http(s) only."""
    return Markup(_markdown().render(text(_MARKER.sub("", body))))  # noqa: S704 - escaped by markdown-it (html=False)


def description(raw: str) -> Markup:
    """The agent's free-form JSON description, as nested lists; "" when there is none."""
    if not raw:
        return Markup("")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return Markup("<p>") + escape(text(raw)) + Markup("</p>")
    return _json_html(value, 0)


def _json_html(value: object, depth: int) -> Markup:
    if depth > MAX_JSON_DEPTH:
        return Markup("<code>…</code>")
    if isinstance(value, dict):
        items = [Markup("<dt>{}</dt><dd>{}</dd>").format(text(str(k)), _json_html(v, depth + 1))
                 for k, v in value.items()]
        return Markup('<dl class="json">') + Markup("").join(items) + Markup("</dl>")
    if isinstance(value, list):
        items = [Markup("<li>{}</li>").format(_json_html(v, depth + 1)) for v in value]
        return Markup('<ul class="json">') + Markup("").join(items) + Markup("</ul>")
    if isinstance(value, str):
        return Markup('<span class="json-text">{}</span>').format(text(value))
    return Markup("<code>{}</code>").format(json.dumps(value))


@dataclass(frozen=True, slots=True)
class Row:
    kind: RowKind
    old: int | None
    new: int | None
    code: Markup


@functools.lru_cache(maxsize=256)
def _lexer(suffix: str) -> Lexer:
    found: Lexer
    try:
        found = get_lexer_for_filename(f"file{suffix}", stripnl=False, ensurenl=False)
    except ClassNotFound:
        found = TextLexer(stripnl=False, ensurenl=False)
    return found


_FORMATTER: HtmlFormatter[str] = HtmlFormatter(nowrap=True, classprefix="hl-")


def _code(line: str, lexer: Lexer) -> Markup:
    # Pygments escapes the text it wraps in spans; its output is what it made, not the line.
    return Markup(highlight(text(line), lexer, _FORMATTER).rstrip("\n"))  # noqa: S704


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind("."):] if "." in name else name


def diff_rows(diff: str, path: str) -> list[Row]:
    """A file's unified diff as rows; the header lines (diff --git, index, ---/+++) dropped."""
    lexer = _lexer(_suffix(path))
    rows: list[Row] = []
    old = new = 0
    in_hunk = False
    for line in diff.removesuffix("\n").split("\n"):  # not splitlines: \f or U+2028 is code
        hunk = _HUNK.match(line)
        if hunk:
            old, new, in_hunk = int(hunk[1]), int(hunk[2]), True
            rows.append(Row("hunk", None, None, Markup("{}").format(text(line))))
        elif not in_hunk:
            continue
        elif line.startswith("+"):
            rows.append(Row("add", None, new, _code(line[1:], lexer)))
            new += 1
        elif line.startswith("-"):
            rows.append(Row("del", old, None, _code(line[1:], lexer)))
            old += 1
        elif line.startswith("\\"):
            rows.append(Row("note", None, None, Markup("{}").format(text(line[1:].strip()))))
        else:
            rows.append(Row("context", old, new, _code(line[1:], lexer)))
            old, new = old + 1, new + 1
    return rows


def highlight_css() -> str:
    defs: str = _FORMATTER.get_style_defs(".code")  # type: ignore[no-untyped-call]
    return defs
