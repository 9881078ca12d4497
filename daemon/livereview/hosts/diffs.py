"""Reading one file's unified diff, the same way for every host: counts, binary, size."""

from __future__ import annotations

BINARY_MARKERS = ("Binary files ", "GIT binary patch")


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
