"""Reading one file's unified diff, the same way for every host: counts, binary, size."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from livereview.core.model import (
    Anchor,
    DiffRefs,
    FileChange,
    Identity,
    InlineComment,
    Message,
    Side,
    Snapshot,
)

BINARY_MARKERS = ("Binary files ", "GIT binary patch")
_FILE_START = re.compile(r"(?m)^(?=diff --git )")


def count_lines(diff: str) -> tuple[int, int]:
    """(added, removed) lines in the hunks of a diff; headers are not lines of the file
    (a removed SQL comment `-- x` reads `--- x`, so headers are told apart by position)."""
    additions = deletions = 0
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("diff "):
            in_hunk = False
        elif in_hunk and line.startswith("+"):
            additions += 1
        elif in_hunk and line.startswith("-"):
            deletions += 1
    return additions, deletions


def looks_binary(diff: str) -> bool:
    """git's note for a binary file ("Binary files a/x and b/x differ") instead of hunks."""
    for line in diff.splitlines():
        if line.startswith("@@"):
            return False
        if line.startswith(BINARY_MARKERS):
            return True
    return False


def too_large(size: int) -> str:
    return f"too large ({size} bytes)"


def hunks(diff: str) -> str:
    """A git diff of one file without its headers (`diff --git`, `index`, `---`/`+++`):
    the hunks-only form GitLab and GitHub send, so every host yields the same shape."""
    start = diff.find("\n@@")
    if diff.startswith("@@"):
        return diff
    return diff[start + 1:] if start >= 0 else ""


def anchor_of(refs: DiffRefs, comment: InlineComment) -> Anchor:
    """The Anchor an inline comment means: a removed line has only its old number, an added
    line only its new one, a context line both."""
    old = comment.side is Side.OLD
    return Anchor(new_path=comment.path, old_path=comment.old_path or comment.path,
                  new_line=None if old else comment.line,
                  old_line=comment.line if old else comment.old_line,
                  base_sha=refs.base_sha, start_sha=refs.start_sha, head_sha=refs.head_sha)


def own_general_comments(snapshot: Snapshot, me: Identity) -> list[Message]:
    """The first messages of the bot's threads that sit on no line: its summaries (hosts
    without a review object keep them as general comments)."""
    return [t.root for t in snapshot.threads
            if t.anchor is None and t.root is not None and not t.root.system
            and me.is_me(t.root.author)]


def split_git_diff(diff: str) -> dict[tuple[str, str], str]:
    """A git diff of several files → (old path, new path) → that file's part, told apart by
    their `diff --git a/OLD b/NEW` headers (a part's `---`/`+++` say /dev/null for an added
    or removed file, so the header is the one place both paths are)."""
    parts: dict[tuple[str, str], str] = {}
    for body in _FILE_START.split(diff):
        if not body.startswith("diff --git "):
            continue
        header = body.split("\n", 1)[0][len("diff --git "):]
        # "a/OLD b/NEW": a path may hold " b/" itself, so every split is remembered.
        for at in range(len(header)):
            if header.startswith("a/") and header[at:at + 3] == " b/":
                parts.setdefault((header[2:at], header[at + 3:]), body)
    return parts


@dataclass(frozen=True)
class PathFilter:
    """Which files of an MR a caller wants: shell globs (`*` crosses `/`) matched against
    the new and the old path; none: every file. When every pattern is a plain path, the
    set of them is `literal`, and a host reading pages of files may stop once it has met
    them all (GitLab's /diffs, GitHub's /files take no path) or ask for them alone
    (Bitbucket Cloud's diffstat and diff take `path`, repeated)."""

    globs: tuple[str, ...] = ()

    def wants(self, change: FileChange) -> bool:
        return not self.globs or any(fnmatch.fnmatchcase(p, glob) for glob in self.globs
                                     for p in (change.new_path, change.old_path) if p)

    @property
    def literal(self) -> frozenset[str] | None:
        if not self.globs or any(c in glob for glob in self.globs for c in "*?["):
            return None
        return frozenset(self.globs)

    def met(self, seen: set[str], change: FileChange) -> None:
        """Adds to `seen` the plain paths wanted that `change` is (memory: those alone)."""
        literal = self.literal
        if literal is not None:
            seen.update(p for p in (change.new_path, change.old_path) if p in literal)

    def done(self, seen: set[str]) -> bool:
        """Every plain path wanted has been met (`seen`: filled by `met`)."""
        literal = self.literal
        return literal is not None and literal <= seen


EVERY_FILE = PathFilter()
