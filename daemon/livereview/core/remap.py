"""Where a line of a file went between two versions of it: the same line, moved, changed or
gone (docs/DESIGN.md §4, "Moved lines"). Pure.

The file at the head a thread was started on and at the MR's head now are aligned by
difflib's opcodes, as the interdiff (reply/interdiff.py) aligns them: a line inside an
`equal` block is the same text, at its new number; inside `replace` it was rewritten;
inside `delete` it is gone. Renames are the caller's business: it reads the file at the
new head under the path the diffstat gives it.
"""

from __future__ import annotations

import difflib
import enum
from dataclasses import dataclass


class Fate(enum.StrEnum):
    SAME = "same"  # the same text at the same number
    MOVED = "moved"  # the same text at another number
    CHANGED = "changed"  # rewritten in place (`replace`): no one line is "it" any more
    GONE = "gone"  # deleted, or the file is gone


@dataclass(frozen=True)
class Remapped:
    fate: Fate
    line: int | None  # the line's number at the new head (SAME and MOVED only)


def remap(before: str, after: str, line: int) -> Remapped:
    """Where `line` (1-based) of `before` is in `after`. A line past the end of `before`
    is gone: nothing of the earlier version was there."""
    old, new = before.splitlines(), after.splitlines()
    if not 1 <= line <= len(old):
        return Remapped(Fate.GONE, None)
    index = line - 1
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if not i1 <= index < i2:
            continue
        if tag == "equal":
            now = j1 + index - i1 + 1
            return Remapped(Fate.SAME if now == line else Fate.MOVED, now)
        return Remapped(Fate.GONE if tag == "delete" else Fate.CHANGED, None)
    return Remapped(Fate.GONE, None)  # unreachable: the opcodes cover every old line


def context(text: str, line: int, around: int = 2) -> str:
    """The lines of `text` around `line` (1-based), at most `around` on each side: the old
    code a note quotes so a reader sees what the thread was about."""
    lines = text.splitlines()
    first, last = max(line - 1 - around, 0), min(line + around, len(lines))
    return "\n".join(lines[first:last])
