"""Where a finding goes: on a line of the diff, or in the summary. Pure.

A host accepts an inline comment only on a line its diff shows: an added or context line
(numbered in the new file) or a removed line (numbered in the old file). The model names a
line and a side; a line the diff does not show goes to the summary instead of being
refused by the host (GitLab 400, GitHub 422) or pinned to the wrong code.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from livereview.core.findings import Finding
from livereview.core.model import FileChange, InlineComment, Side

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class LineMap:
    """The lines one file's diff shows. `new` maps each added or context line (new-file
    number) to its old-file number (None when added); `removed` holds removed lines."""

    new: dict[int, int | None] = field(default_factory=dict)
    removed: set[int] = field(default_factory=set)
    old_context: dict[int, int] = field(default_factory=dict)  # old number → new number
    # Each hunk's old-file and new-file line numbers (a range may not leave its hunk).
    hunks: list[tuple[range, range]] = field(default_factory=list)

    @classmethod
    def of(cls, diff: str) -> LineMap:
        lines = cls()
        old = new = old_left = new_left = 0
        for text in diff.split("\n"):
            if old_left <= 0 and new_left <= 0:
                match = _HUNK.match(text)
                if match:
                    old, new = int(match.group(1)), int(match.group(3))
                    old_left = int(match.group(2) or "1")
                    new_left = int(match.group(4) or "1")
                    lines.hunks.append((range(old, old + old_left),
                                        range(new, new + new_left)))
                continue  # a header line between hunks ("diff --git", "+++ b/x")
            marker = text[:1]
            if marker == "+" and new_left > 0:
                lines.new[new] = None
                new, new_left = new + 1, new_left - 1
            elif marker == "-" and old_left > 0:
                lines.removed.add(old)
                old, old_left = old + 1, old_left - 1
            elif marker in (" ", "") and old_left > 0 and new_left > 0:
                lines.new[new] = old
                lines.old_context[old] = new
                old, new, old_left, new_left = old + 1, new + 1, old_left - 1, new_left - 1
            # "\ No newline at end of file" and anything else: shown, not numbered
        return lines

    def hunk(self, line: int, *, old: bool) -> int | None:
        """The index of the hunk showing `line` (numbered in the old file if `old`)."""
        return next((i for i, (olds, news) in enumerate(self.hunks)
                     if line in (olds if old else news)), None)


def place(finding: Finding, change: FileChange, lines: LineMap) -> InlineComment | None:
    """The inline comment for `finding`, or None when its line is not in the diff (then
    the finding belongs in the summary)."""
    old_path = change.old_path if change.old_path != change.new_path else ""
    removed_file = change.status.value == "removed"
    path = change.old_path if removed_file else change.new_path
    if finding.side is Side.NEW and finding.line in lines.new:
        return InlineComment(path, finding.line, Side.NEW, finding.body, old_path,
                             lines.new[finding.line])
    if finding.line in lines.removed and (finding.side is Side.OLD
                                          or finding.line not in lines.new):
        # A removed line exists only in the old file: whatever side the model said.
        return InlineComment(path, finding.line, Side.OLD, finding.body, old_path,
                             finding.line)
    if finding.side is Side.OLD and finding.line in lines.old_context:
        new_line = lines.old_context[finding.line]  # a context line, named by its old number
        return InlineComment(path, new_line, Side.NEW, finding.body, old_path, finding.line)
    return None


def change_digest(diff: str) -> str:
    """What a file's change is, without where it sits: the added and removed lines only, so
    a rebase that moves hunks (new line numbers, new context) does not count as a change."""
    digest = hashlib.sha256()
    for text in diff.split("\n"):
        if text[:1] in ("+", "-") and not text.startswith(("+++ ", "--- ")):
            digest.update(text.encode("utf-8", "surrogatepass"))
            digest.update(b"\n")
    return digest.hexdigest()[:32]


# Files nobody reviews by reading: lock files, vendored and built output, generated code.
_GENERATED_NAMES = frozenset({
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Cargo.lock",
    "Gemfile.lock", "composer.lock", "go.sum", "uv.lock", "Pipfile.lock", "npm-shrinkwrap.json",
})
_GENERATED_SUFFIXES = (".min.js", ".min.css", ".map", "_pb2.py", "_pb2.pyi", ".pb.go",
                       ".generated.cs", ".g.dart", ".snap")
_GENERATED_DIRS = ("vendor/", "node_modules/", "dist/", "build/", "__generated__/",
                   "third_party/")
_GENERATED_MARK = re.compile(r"@generated|DO NOT EDIT|Code generated .* DO NOT EDIT")


def generated(path: str, diff: str) -> bool:
    """A lock file, built or vendored output, or a file that says it is generated (in its
    first lines, as `go generate` and protoc write it)."""
    name = path.rsplit("/", 1)[-1]
    if name in _GENERATED_NAMES or path.endswith(_GENERATED_SUFFIXES):
        return True
    if any(path.startswith(d) or f"/{d}" in path for d in _GENERATED_DIRS):
        return True
    head = "\n".join(diff.split("\n", 12)[:12])
    return bool(_GENERATED_MARK.search(head))
