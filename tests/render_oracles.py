"""How the hosts render what the bot posts: the oracles the sanitizing tests check against.

Three CommonMark engines, as the hosts run them: cmark-gfm (GitHub's own), comrak with
GitLab's extensions (its `>>>` multi-line quotes among them; GitLab renders with comrak),
and markdown-it (the daemon's own reader). Raw HTML passes through, as hosts sanitize it
rather than escape it. A mention is live where an `@name` reaches rendered text outside
code, pre and links; an HTML comment hides text on every host.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import cmarkgfm
import comrak
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

# GitLab's user/group reference pattern (User.reference_pattern; GitHub's is the same
# shape) after `@`, plus Bitbucket Data Center's @"Display Name" and Bitbucket Cloud's
# @{account-id}. Ruby's \w is ASCII.
_LIVE = re.compile(r"(?<![A-Za-z0-9_])@(?:[A-Za-z0-9_.][A-Za-z0-9_\-./]*|\"[^\"]+\"|\{[^}]+\})")
_NOT_PROSE = ("code", "pre", "a", "script", "style", "textarea")


class _RenderedText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in _NOT_PROSE
        self.text.append("\0")

    def handle_endtag(self, tag: str) -> None:
        self.skip = max(0, self.skip - (tag in _NOT_PROSE))  # stray ends: ignored
        self.text.append("\0")

    def handle_data(self, data: str) -> None:
        self.text.append("\0" if self.skip else data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def _github(body: str) -> str:
    html: str = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    return html


def _gitlab(body: str) -> str:
    extensions = comrak.ExtensionOptions()
    for name in ("multiline_block_quotes", "table", "strikethrough", "autolink", "tasklist",
                 "footnotes", "math_dollars", "math_code"):
        setattr(extensions, name, True)
    render = comrak.RenderOptions()
    render.unsafe_ = True
    return str(comrak.render_markdown(body, extension_options=extensions, render_options=render))


def _markdown_it(body: str) -> str:
    return str(MarkdownIt("commonmark").render(body))


HOSTS: dict[str, Callable[[str], str]] = {"github": _github, "gitlab": _gitlab,
                                           "markdown-it": _markdown_it}


def read(html: str) -> _RenderedText:
    reader = _RenderedText()
    try:
        reader.feed(html)
        reader.close()
    except AssertionError:  # html.parser gives up on some malformed declarations
        reader = _RenderedText()
        reader.feed(html.replace("<![", "&lt;!["))
        reader.close()
    return reader


def live_mentions(body: str) -> dict[str, list[str]]:
    """Per host, the mentions that would notify someone."""
    found = {}
    for host, render in HOSTS.items():
        mentions = _LIVE.findall("".join(read(render(body)).text))
        if mentions:
            found[host] = mentions
    return found


def hidden_comments(body: str) -> dict[str, list[str]]:
    """Per host, the HTML comments (text nobody sees)."""
    found = {}
    for host, render in HOSTS.items():
        comments = read(render(body)).comments
        if comments:
            found[host] = comments
    return found
