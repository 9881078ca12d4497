"""Which quick actions GitLab would run from a note: its extractor, ported (a test oracle).

GitLab runs every `/command` its extractor finds in a note under the permissions of the
note's author. Self-hosted instances run many versions, and the extractor changed over
time, so the oracle ports each generation and a body is safe only if none extracts a
command. Source: gitlab-org/gitlab (mirrored as gitlabhq/gitlabhq),
`lib/gitlab/quick_actions/extractor.rb`:

- `REGEX_V1`, at commit 18f7828977b74bf6e5153594a098ef90e773b3b7: one regex over the whole
  note. Skipped: a fence of exactly three backticks at the start of a line up to the next
  line that is exactly three backticks, backtick pairs on lines of their own, a `<tag>`
  line up to a `</tag>` line, and `>>>` quotes. Nothing else counts as code: `~~~`,
  indented or longer fences, a closing fence with trailing text, an unclosed fence,
  indented code, `<pre>` on the same line as its text — all are scanned.
- `REGEX_V2`, the same file's later regex-only form (constants CODE_REGEX,
  INLINE_CODE_REGEX, HTML_BLOCK_REGEX, QUOTE_BLOCK_REGEX joined as EXCLUSION_REGEX):
  any backtick pair, across lines, is skipped.
- `paragraph_commands`, at commit 7e202c4fa8d1a2d3acb6f3f6a374a4f7e88a8da9: the note is
  rendered by Banzai::Pipeline::QuickActionPipeline (raw HTML disabled; GitLab's `>>>`
  quotes) and `lib/banzai/filter/quick_action_filter.rb` keeps the top-level paragraphs
  with a line of text starting with `/`; the regex (inline code and HTML blocks skipped) then runs
  over those paragraphs' source lines. GitLab renders with comrak; so does this port (its
  `multiline_block_quotes` extension standing for BlockquoteFenceLegacyFilter).

In every generation a command is `/name` at the very start of a line (column 0), the name
case-insensitive (Ruby's `i`, which folds `ſ` to `s` and the Kelvin sign to `k`, and —
Onigmo's multi-character folding, CaseFolding.txt's `F` entries — `ß` or `ẞ` to `ss` and
the ligatures U+FB00–FB06 to `ff`, `fi`, `fl`, `ffi`, `ffl`, `st` inside a literal name,
never inside a character class: `/aßign` is extracted for `assign`, as `aßign`, which no
definition runs but which the extractor still cuts from the note), then
either a space and arguments or only whitespace to the end of the line. GitLab's names are
its own command list; `ANY_NAME` stands for every name it has or may add.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser

import comrak

ANY_NAME = r"[a-z0-9_]+"
# Ruby's \s (ASCII) in `(?:\s*\n|$)`.
_COMMAND = r"^/(?P<cmd>{names})(?:[ ](?P<arg>[^\n]*))?(?:[ \t\r\n\f\v]*\n|$)"
# 18f78289, the commands_regex alternatives in order: code, inline_code, html, the `>>>`
# quote, then the command.
_V1_SKIPPED = (r"(?P<code>^```.+?\n```$)|(?P<inline_code>^.*`\n*.+?\n*`$)"
               r"|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)|(?P<quote>^>>>.+?\n>>>$)")
# EXCLUSION_REGEX: CODE_REGEX | INLINE_CODE_REGEX | HTML_BLOCK_REGEX | QUOTE_BLOCK_REGEX
_V2_SKIPPED = (r"(?P<code>^```.+?\n```$)|(?P<inline_code>`\n*.+?\n*`)"
               r"|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)|(?P<quote>^>>>.+?\n>>>$)")
# 7e202c4f: EXCLUSION_REGEX = INLINE_CODE_REGEX (`.+?`) | HTML_BLOCK_REGEX, per paragraph
_V3_SKIPPED = r"(?P<inline_code>`.+?`)|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)"
_FLAGS = re.MULTILINE | re.DOTALL | re.IGNORECASE  # Ruby's %r{…}mix; ^ and $ are per line

Command = tuple[str, ...]


# Onigmo under /i: one character matching several of a literal (CaseFolding.txt, status F).
_MULTI_FOLDS = {"ffi": "\ufb03", "ffl": "\ufb04", "ff": "\ufb00", "fi": "\ufb01",
                "fl": "\ufb02", "ss": "\u00df\u1e9e", "st": "\ufb05\ufb06"}


def _folding(name: str) -> str:
    """`name` as a regex that also takes the characters Ruby's /i folds into its letters."""
    if not name:
        return ""
    options = [re.escape(name[0]) + _folding(name[1:])]
    options += [f"[{chars}]" + _folding(name[len(seq):])
                for seq, chars in _MULTI_FOLDS.items() if name.lower().startswith(seq)]
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def _names(names: Sequence[str] | None) -> str:
    return ANY_NAME if names is None else "|".join(_folding(n) for n in names)


def _scan(skipped: str, text: str, names: Sequence[str] | None) -> list[Command]:
    """`content.gsub!(commands_regex)`: leftmost matches; skipped spans yield nothing."""
    pattern = re.compile(f"{skipped}|{_COMMAND.format(names=_names(names))}", _FLAGS)
    found: list[Command] = []
    for match in pattern.finditer(text):
        if match.group("cmd"):
            found.append(tuple(p for p in (match.group("cmd").lower(), match.group("arg"))
                               if p and p.strip()))
    return found


def regex_v1_commands(body: str, names: Sequence[str] | None = None) -> list[Command]:
    return _scan(_V1_SKIPPED, body.replace("\r", ""), names)


def regex_v2_commands(body: str, names: Sequence[str] | None = None) -> list[Command]:
    return _scan(_V2_SKIPPED, body.replace("\r", ""), names)


class _TopLevelParagraphs(HTMLParser):
    """`doc.children.each`: top-level `<p data-sourcepos>` and their text (`node.content`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.current: list[str] | None = None
        self.start_end: tuple[int, int] = (0, 0)
        self.found: list[tuple[int, int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0 and tag == "p":
            where = dict(attrs).get("data-sourcepos") or ""
            rows = re.match(r"(\d+):\d+-(\d+):\d+", where)
            if rows:  # MarkdownFilter.parse_sourcepos: rows from 0
                self.current = []
                self.start_end = (int(rows[1]) - 1, int(rows[2]) - 1)
        if tag not in ("br", "hr", "img", "input", "wbr"):
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth == 0 and self.current is not None:
            self.found.append((*self.start_end, "".join(self.current)))
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.current.append(data)


def _render(body: str) -> str:
    extensions = comrak.ExtensionOptions()
    for name in ("multiline_block_quotes", "table", "strikethrough", "autolink", "tasklist",
                 "footnotes", "math_dollars", "math_code"):
        setattr(extensions, name, True)
    render = comrak.RenderOptions()
    render.sourcepos = True  # and not unsafe_: QuickActionPipeline disables raw HTML
    return str(comrak.render_markdown(body, extension_options=extensions,
                                      render_options=render))


def quick_action_paragraphs(body: str) -> list[tuple[int, int]]:
    """QuickActionFilter: (start_line, end_line) of each top-level paragraph with a line
    of text starting with `/` (`%r{^/}`), lines counted from 0."""
    reader = _TopLevelParagraphs()
    reader.feed(_render(body))
    reader.close()
    return [(start, end) for start, end, text in reader.found
            if re.search("^/", text, re.MULTILINE)]  # Ruby's ^ is per line


def paragraph_commands(body: str, names: Sequence[str] | None = None) -> list[Command]:
    content = body.replace("\r", "")
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", content)  # Ruby's String#lines
    found: list[Command] = []
    for start, end in quick_action_paragraphs(content):
        if end + 1 < len(lines) and lines[end + 1] == "\n":
            end += 1
        found += _scan(_V3_SKIPPED, "".join(lines[start:end + 1]), names)
    return found


def commands(body: str, names: Sequence[str] | None = None) -> list[Command]:
    """Every command any generation of GitLab's extractor would run from `body`."""
    return (regex_v1_commands(body, names) + regex_v2_commands(body, names)
            + paragraph_commands(body, names))
