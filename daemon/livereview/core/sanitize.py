"""Hostile text made safe, both ways. Pure.

Inbound (a comment, a title, a file on its way into a prompt or onto a terminal): control
characters, ANSI escapes and invisible format characters (bidi overrides such as U+202E,
zero-width characters, tag characters that smuggle ASCII) are dropped; text from others is
fenced in a way its author cannot forge.

Outbound (everything the bot posts under its name): no live `@mention` except the ones the
bot means, no hidden HTML comment (a forged reply marker among them), no invisible
characters, no line GitLab would run as a quick action. Code blocks are otherwise left as
they are, since hosts make no mentions there.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence

from livereview.core.markdown import code_lines

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Variation selectors (U+FE00–FE0F, U+E0100–E01EF) are not format characters but carry
# hidden payloads the same way tag characters do ("emoji smuggling").
_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
WORD_JOINER = "\u2060"


def _invisible(char: str) -> bool:
    # Cf: format characters (bidi overrides, zero-width); Cs: lone surrogates, which JSON's
    # "\ud800" escapes can carry and no database or UTF-8 writer takes.
    return unicodedata.category(char) in ("Cf", "Cs")


def clean(text: str) -> str:
    """`text` without ANSI escapes, control characters (newlines and tabs stay), invisible
    format characters and lone surrogates."""
    text = _ANSI.sub("", text)
    text = _CONTROL.sub("", text)
    text = _SELECTORS.sub("", text)
    if text.isascii():
        return text
    return "".join(c for c in text if not _invisible(c))


# A path shown as it is: printable, words separated by single spaces, no quote or backslash.
_PLAIN_PATH = re.compile(r'[^\s"\\]+(?: [^\s"\\]+)*')
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                 "\r": "\\r", "\t": "\\t"}


def shown_path(path: str) -> str:
    """A file's path as people and models see it, never two paths alike: as it is when it is
    plain (printable, no space at either end or twice in a row, no quote or backslash);
    else as a JSON string, whose value is the exact path — `"a.py "`, `"a\\tb.py"`, any
    invisible or control character as a `\\uXXXX` escape (git quotes such names the same
    way, C-style, in its diff headers)."""
    if _PLAIN_PATH.fullmatch(path) and path.isprintable():
        return path
    return '"' + "".join(_JSON_ESCAPES.get(c) or (c if c.isprintable() else _escape(c))
                         for c in path) + '"'


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells the rest as a surrogate pair (RFC 8259 §7)
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def one_line(text: str, limit: int = 200) -> str:
    """A field shown outside a fence (a title, a branch, a path): one clean line, so it
    cannot start a section of its own."""
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- fences around other people's text in prompts ------------------------------------------
# Anything that could read as a fence tag: `<untrusted`, `</untrusted-x>`, their HTML-entity
# spellings (&lt; &#60; &#x3c;), with any case and spaces (invisible characters are gone).
_TAG_LIKE = re.compile(r"(?:<|\uff1c|\ufe64|&lt;?|&#0*60;?|&#x0*3c;?)(\s*/?\s*untrusted)",
                       re.IGNORECASE)


def fence_id(pieces: Iterable[str]) -> str:
    """A fence name derived from everything it will enclose: to close the fence, a text
    would have to contain the hash of itself."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def fenced(text: str, fence: str) -> str:
    """`text` between `<untrusted-FENCE>` tags; tag look-alikes inside are defused (every
    pass at once, so `</untru</untrusted>sted>` leaves nothing behind)."""
    body = _TAG_LIKE.sub(r"‹\1", clean(text))
    return f"<untrusted-{fence}>\n{body}\n</untrusted-{fence}>"


# ---- what the bot posts -------------------------------------------------------------------
# `@name`, `@group/sub`, `@org/team`, `@"Display Name"` (Bitbucket Data Center) and
# `@{account-id}` (Bitbucket Cloud) — not `a@b` (an e-mail address). Hosts look for mentions
# in the *rendered* text, where `_@bob_` is emphasis around one and `@&#97;ll` reads `@all`:
# so every `@` is defused whatever follows it, unless a letter or digit precedes it.
_MENTION = re.compile(f"(?<![A-Za-z0-9])@(?!{WORD_JOINER})")
_BROADCAST = re.compile(r"(?<![A-Za-z0-9])@(?=(?:all|here|channel|everyone)\b)", re.IGNORECASE)
_MAX_PASSES = 8
# Engines disagree on whether Unicode spaces and line separators are whitespace (markdown-it
# says yes, cmark-gfm and comrak say no), and so on what is an HTML block or a fence.
_ODD_SPACE = re.compile("[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
# GitLab reads a line of `>>>` as the start or end of a multi-line quote, which closes
# whatever is open inside it (a code block) where other engines see nothing of the kind.
_GITLAB_QUOTE_LINE = re.compile(r">>>[ \t]*")
# What HTML hides: comments, declarations, CDATA, processing instructions, the "bogus
# comments" a `</` not followed by a letter opens, and elements whose content is never shown
# (hosts strip them, text and all) or that swallow the rest of the post.
_HIDDEN = re.compile(
    r"<(?=[!?]|/(?![A-Za-z])|/?(?:script|style|textarea|template|noscript|iframe|object|embed"
    r"|title|xmp|plaintext|noembed|noframes|select|svg|math|pre"
    # …and what loads from elsewhere when shown (a tracking pixel sees every reader) or
    # folds text away under a harmless summary
    r"|img|picture|video|audio|source|image|details|summary)(?![A-Za-z0-9]))", re.IGNORECASE)
# A reference to an issue or MR (`#12`, `!12`, `&12`, `group/project#12`, `GH-12`) makes
# the host link it and write "mentioned in" on the other side, notifying its watchers: a
# commenter could have the bot touch any issue of any project. A word joiner after the
# sigil reads the same and links nothing. So does one inside `![`: an image would load
# from wherever the text says, for every reader.
_REFERENCE = re.compile(r"(?:[#!&]|(?<![A-Za-z0-9])GH-)(?=[0-9])|!(?=\[)")
_AT_ENTITY = re.compile(r"&(?:#0*64|#x0*40|commat);?", re.IGNORECASE)  # hosts decode them
# GitLab runs a line that starts with `/command` as a quick action (`/merge`, `/approve`,
# `/close`, `/assign`…) under the permissions of whoever posts it — the bot — and other
# hosts' bots (Prow's `/lgtm`) read the same. An escaped slash reads the same and runs
# nothing. https://docs.gitlab.com/user/project/quick_actions/
_COMMAND = re.compile(r"^([ \t]*)/(?=[A-Za-z\u0130\u0131\u017f\u212a\u00df\u1e9e\ufb00-\ufb06])")
# GitLab's extractor (lib/gitlab/quick_actions/extractor.rb) has its own idea of code,
# narrower than CommonMark's: in its regex generations only a ``` fence at the start of a
# line closed by a bare ``` line, backtick pairs, `<tag>`…`</tag>` lines and `>>>` quotes
# are skipped, so a `~~~`, indented or unclosed fence, a `<pre>` or an HTML comment hides
# nothing from it. So a line shaped like its command — `/name`, then a space or the end
# of the line; the name matched case-insensitively the Ruby way, where `ſ` reads `s` and
# the Kelvin sign `k`, and Onigmo folds one `ß`, `ẞ` or ligature (U+FB00–FB06) into two
# or three letters of a name, so `/aßign` is extracted too and cut from the note — is
# neutralised even in code: a word joiner before the slash
# shows nothing and makes the line start with something else. (Leading blanks are
# allowed here although GitLab wants the slash in the first column: a later version may
# not.)
_COMMAND_SHAPE = re.compile(
    r"^([ \t]*)/(?=[A-Za-z0-9_\u0130\u0131\u017f\u212a\u00df\u1e9e\ufb00-\ufb06]+(?:\s|$))")


_BROADCASTS = frozenset({"all", "here", "channel", "everyone"})
_ENDS_A_NAME = frozenset(" \t,;:!?)]'\"")


def _allowed(line: str, at: int, allow: Sequence[str]) -> bool:
    """Is the `@` at `at` one of the intended mentions? Only when the name is followed by
    something that cannot continue it, raw or rendered (`@bob&#97;` reads `@boba`)."""
    rest = line[at + 1:]
    return any(rest.startswith(name) and name.lower() not in _BROADCASTS
               and (len(rest) == len(name) or rest[len(name)] in _ENDS_A_NAME)
               for name in allow if name)


def _defuse_line(line: str, allow: Sequence[str]) -> str:
    line = _AT_ENTITY.sub("@", line)
    if _GITLAB_QUOTE_LINE.fullmatch(line):  # GitLab's multi-line quote: shown, not parsed
        return "\\" + line
    line = _COMMAND.sub(r"\1\\/", line)
    out, last = [], 0
    for match in _MENTION.finditer(line):
        if _allowed(line, match.start(), allow):
            continue
        out.append(line[last: match.end()] + WORD_JOINER)
        last = match.end()
    out.append(line[last:])
    line = _REFERENCE.sub(lambda m: m.group() + WORD_JOINER, "".join(out))
    return _HIDDEN.sub("&lt;", line)


def _inert_line(line: str) -> str:
    return _COMMAND_SHAPE.sub(r"\1" + WORD_JOINER + "/", line)


def inert_commands(text: str) -> str:
    """`text` with every line GitLab could run as a quick action neutralised, whatever
    Markdown says about it (the word joiner is invisible, in code too). What the GitLab
    adapter applies to every body it posts, markers included: a path that forgot
    `outgoing` still commands nothing. GitLab deletes every carriage return before it
    looks (`content.delete!("\\r")`), so a lone one ends a line here, as it does when
    the note is shown."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_inert_line(line) for line in lines)


def _defuse(lines: list[str], allow: Sequence[str]) -> list[str]:
    code = code_lines("\n".join(lines))
    return [_inert_line(_BROADCAST.sub("@" + WORD_JOINER, line)) if i in code
            else _defuse_line(line, allow) for i, line in enumerate(lines)]


def outgoing(text: str, allow_mentions: Sequence[str] = ()) -> str:
    """`text` as the bot may post it: invisible characters dropped; outside code blocks
    every `@mention` not in `allow_mentions` (usernames, without `@`) is defused with a
    word joiner (it shows the same, notifies nobody), HTML comments are shown, not hidden,
    a line starting with `/command` has its slash escaped (no quick action runs), and
    issue and MR references and images link and load nothing. In code blocks only
    broadcast mentions (`@all`, `@here`) are defused, and a line GitLab could still run
    as a quick action gets an invisible word joiner before its slash.

    Defusing a line can change what the lines after it are (a defused HTML block turns an
    indented "code" line into paragraph text), so it repeats until nothing changes; if that
    does not settle, every line is defused — ugly in code, never a ping.
    """
    text = _ODD_SPACE.sub(" ", clean(text.replace("\r\n", "\n").replace("\r", "\n")))
    lines = text.split("\n")
    for _ in range(_MAX_PASSES):
        defused = _defuse(lines, allow_mentions)
        if defused == lines:
            return "\n".join(lines)
        lines = defused
    return "\n".join(_defuse_line(line, allow_mentions) for line in lines)


_HIDDEN_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def quote(text: str, limit: int = 400) -> str:
    """Someone's comment as a Markdown quote the bot may post (a reply that cannot sit in
    its thread quotes the question): what was hidden in it stays out, it is cut at `limit`
    characters, and it is defused like everything else the bot posts."""
    text = _HIDDEN_COMMENT.sub("", text).strip()
    short = text if len(text) <= limit else text[:limit] + "…"
    return outgoing("\n".join("> " + line for line in short.splitlines()))
