"""A thread whose line moved or went away since it was started (docs/DESIGN.md §4, "Moved
lines"). Pure: what to say and where, from the file at both heads and the diff now.

No host moves a thread the bot did not write when its line moves in a way it does not track
(GitHub and Bitbucket Cloud mark it outdated, Data Center leaves its anchor on the commit it
was written on; GitLab carries a position it can trace, and marks the rest outdated). So
the answer goes in the thread as always, opening with where the line went, and one more
message follows the line: a diff note where the line is now (quoting the old code and
linking the thread), or — when the line is gone, or is no longer in the diff, where no
host takes an inline comment — a general comment quoting it.

What is decided here is stored with the answer (the job's meta) when the answer is written,
so the posting step — bracketed like the answer's POST — posts the same thing after a
crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from livereview.core.model import Anchor, MergeRequest
from livereview.core.placement import LineMap
from livereview.core.remap import Fate, context, remap
from livereview.core.sanitize import clean, outgoing, shown_path

QUOTED_LINES = 2  # on each side of the line: what a reader needs to recognise it
QUOTE_CHARS = 1200
_MOVED_MARKER = "<!-- livereview:moved-for={} -->"
_TRAILING_MOVED = re.compile(r"(?:\A|\n)<!-- livereview:moved-for=([\w:.\-]+) -->\s*\Z")


def moved_marker(message_id: str) -> str:
    """The hidden last line of the note that follows a question's moved line."""
    return _MOVED_MARKER.format(message_id)


def moved_for(body: str) -> str | None:
    """The question a follow-the-line note was posted for, read like `replied_to`."""
    match = _TRAILING_MOVED.search(body[-300:])
    return match.group(1) if match else None


@dataclass(frozen=True)
class Moved:
    """Where a thread's line is at the MR's head: `line` None when it is gone."""

    old_path: str
    old_line: int
    path: str
    line: int | None
    base_line: int | None  # its number in the diff's old file (a context line), else None
    in_diff: bool  # the diff at the head shows the line: an inline comment may go there
    quoted: str  # the old code around the line, as it read when the thread started

    def meta(self) -> dict[str, Any]:
        return {"old_path": self.old_path, "old_line": self.old_line, "path": self.path,
                "line": self.line, "base_line": self.base_line, "in_diff": self.in_diff,
                "quoted": self.quoted}

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> Moved | None:
        raw = meta.get("moved")
        if not isinstance(raw, dict):
            return None
        return cls(str(raw["old_path"]), int(raw["old_line"]), str(raw["path"]),
                   None if raw["line"] is None else int(raw["line"]),
                   None if raw["base_line"] is None else int(raw["base_line"]),
                   bool(raw["in_diff"]), str(raw["quoted"]))

    def anchor(self, mr: MergeRequest) -> Anchor | None:
        """Where the note goes on the MR's head, or None: a general comment."""
        if self.line is None or not self.in_diff:
            return None
        refs = mr.diff_refs()  # read by the job that posts it (reply/worker.py)
        return Anchor(new_path=self.path, old_path=self.old_path, new_line=self.line,
                      old_line=self.base_line, base_sha=refs.base_sha,
                      start_sha=refs.start_sha, head_sha=refs.head_sha)

    def where(self) -> str:
        return code_span(f"{shown_path(self.path)}:{self.line}")

    def thread_note(self) -> str:
        """The answer's first line in the thread: where the line went."""
        if self.line is None:
            return ("*The line this thread is on was removed from the MR since the thread "
                    "started; a comment on the MR quotes it and links here.*")
        there = "a note there links back here" if self.in_diff else \
            "it is outside the MR's diff now, so a comment on the MR links back here"
        return (f"*The line this thread is on has moved: it is now at {self.where()} on the "
                f"MR's head ({there}).*")

    def note(self, thread_link: str, message_id: str) -> str:
        """The message that follows the line: safe to post, with its marker last."""
        thread = f"[a thread]({thread_link})" if thread_link else "a thread"
        was = code_span(f"{shown_path(self.old_path)}:{self.old_line}")
        if self.line is None:
            head = (f"The line {thread} is about ({was} of an earlier version of this MR) "
                    "is no longer in the MR: it was removed. It read:")
        elif self.in_diff:
            head = (f"A question in {thread} was asked about this line when it was {was} "
                    "(an earlier version of this MR); it is answered there. It read:")
        else:
            head = (f"The line {thread} is about ({was} of an earlier version of this MR) "
                    f"is now at {self.where()}, where no inline comment can go (outside the "
                    "MR's diff); the question is answered in the thread. It read:")
        body = outgoing(f"{head}\n\n{code_block(self.quoted)}")
        return f"{body}\n\n{moved_marker(message_id)}"


def code_span(text: str) -> str:
    """`text` as inline code no backtick in it can end (CommonMark: a longer run of
    backticks delimits, a space pads a text that starts or ends with one)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_block(code: str) -> str:
    """`code` as a fenced block no line of it can close (a fence longer than any run of
    backticks in it), cut to QUOTE_CHARS."""
    code = clean(code)
    if len(code) > QUOTE_CHARS:
        code = code[:QUOTE_CHARS] + "…"
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code}\n{fence}"


def locate(anchor: Anchor, path: str, before: str, after: str | None, diff_now: str
           ) -> Moved | None:
    """Where the anchored (new-side) line went, or None when there is nothing to say: the
    line is where it was, or was rewritten in place (the interdiff tells the model that),
    or the thread is not on a new-side line. `after` None: the file is gone. `diff_now` is
    the file's part of the diff at the MR's head."""
    if anchor.new_line is None:
        return None
    quoted = context(before, anchor.new_line, QUOTED_LINES)
    old_path = anchor.new_path or anchor.old_path
    if after is None:
        return Moved(old_path, anchor.new_line, path, None, None, False, quoted)
    found = remap(before, after, anchor.new_line)
    if found.fate in (Fate.SAME, Fate.CHANGED):
        return None
    if found.line is None:
        return Moved(old_path, anchor.new_line, path, None, None, False, quoted)
    shown = LineMap.of(diff_now).new
    return Moved(old_path, anchor.new_line, path, found.line, shown.get(found.line),
                 found.line in shown, quoted)
