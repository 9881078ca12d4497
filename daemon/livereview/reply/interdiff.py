"""What changed at a thread's anchor since the thread started: the interdiff of its file
between the head the thread was started on and the MR's head now. Pure.

"Is this fixed now?" is answered by the anchored line's fate (changed, removed, untouched)
and by the changed hunks nearest to it, nearest first, so a cut keeps what matters.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

CONTEXT_LINES = 3


@dataclass(frozen=True)
class Interdiff:
    fate: str  # one sentence on the anchored line
    diff: str  # unified hunks, nearest to the anchor first ("" when nothing changed)


def _fate(opcodes: Sequence[tuple[str, int, int, int, int]], line: int | None) -> str:
    if line is None:
        return "The thread is not on a line of the file (a removed line, or the whole file)."
    index = line - 1
    for tag, i1, i2, j1, j2 in opcodes:
        if not i1 <= index < i2 and not (i1 == i2 == index):
            continue
        if tag == "equal":
            return (f"The anchored line {line} is unchanged (now line {j1 + index - i1 + 1}); "
                    "other lines of the file changed.")
        if tag == "delete":
            return f"The anchored line {line} was removed."
        if tag == "replace":
            now = f"line {j1 + 1}" if j2 - j1 == 1 else f"lines {j1 + 1}–{j2}"
            return f"The anchored line {line} was changed (now {now})."
    return f"The anchored line {line} is past the end of the earlier version."


def interdiff(before: str, after: str, path: str, line: int | None) -> Interdiff:
    """The change of `path` from `before` to `after`; `line` is the anchored line of the
    earlier version (its old-side number for a removed line is not meaningful here)."""
    old, new = before.splitlines(), after.splitlines()
    if old == new:
        return Interdiff(f"The file {path} did not change since the thread started.", "")
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    # A copy: get_grouped_opcodes trims the first and last opcodes of the cached list.
    opcodes = list(matcher.get_opcodes())
    groups = list(matcher.get_grouped_opcodes(CONTEXT_LINES))
    if line is not None:  # nearest to the anchor first
        groups.sort(key=lambda g: min(abs(line - 1 - g[0][1]), abs(line - 1 - g[-1][2])))
    hunks = []
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        rows = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                rows += [f" {text}" for text in old[a1:a2]]
                continue
            rows += [f"-{text}" for text in old[a1:a2]]
            rows += [f"+{text}" for text in new[b1:b2]]
        hunks.append("\n".join(rows))
    return Interdiff(_fate(opcodes, line),
                     f"--- {path} (when the thread started)\n+++ {path} (now)\n"
                     + "\n".join(hunks))
