"""Where an inline comment goes: a line of the diff, a range of lines, or a whole file —
checked against the MR's diff before anything is posted (docs/agent-tools.md, "comment").

Every host refuses a line its diff does not show (GitLab 400, GitHub 422, Bitbucket 400),
in words that do not name the line; the tool says which line and why instead. The rule is
the review's own (review/placement.py): an added or context line by its new number, a
removed or context line by its old one; a context line carries both numbers, as GitLab
requires. A range lies within one hunk: GitHub refuses any other ("start_line must be part
of the same hunk as the line", REST "Create a review comment for a pull request"), and no
host's web page selects across one.
"""

from __future__ import annotations

import glob
import re

from livereview.core.model import Anchor, FileChange, MRKey
from livereview.core.placement import LineMap
from livereview.hosts.diffs import PathFilter
from livereview.tools.diffs import MAX_FILE_BYTES
from livereview.tools.errors import BadInput
from livereview.tools.toolbox import Toolbox

MAX_LINE = 10_000_000  # past any file a host shows a diff of (and 64-bit ids)
_RANGE = re.compile(r"^\s*(\d{1,30})\s*(?:-\s*(\d{1,30})\s*)?$")


def parse_lines(value: str) -> tuple[int, int | None]:
    """`--line 14` or `--line 10-14`: (first, last or None)."""
    match = _RANGE.match(value)
    if match is None:
        raise BadInput(f"--line {value}: expected a line number or a range FIRST-LAST, "
                       "e.g. 14 or 10-14")
    return int(match[1]), int(match[2]) if match[2] else None


def check_lines(line: int | None, end_line: int | None) -> int | None:
    """The range's last line (None: a single line); BadInput for lines no diff has."""
    for name, value in (("--line", line), ("--end-line", end_line)):
        if value is not None and not 1 <= value <= MAX_LINE:
            raise BadInput(f"{name} {value}: expected a line number from 1 to {MAX_LINE}")
    if end_line is not None and line is None:
        raise BadInput("comment: a range's last line needs its first (--line FIRST-LAST)")
    if line is not None and end_line is not None and end_line < line:
        raise BadInput(f"--line {line}-{end_line}: the range ends before it starts")
    return None if end_line == line else end_line


async def file_change(box: Toolbox, key: MRKey, path: str) -> FileChange:
    """The MR's change of `path` (a whole-file comment needs only that: no diff is read,
    and a binary or oversized file may be commented on too)."""
    only = PathFilter((glob.escape(path),))
    changes = await box.call(key, "diffstat", box.host(key).diffstat(key, only))
    for change in changes:
        if path in (change.new_path, change.old_path):
            return change
    raise BadInput(f"{path} is not a file {key} changes (`mr diffstat` lists them)")


async def whole_file(box: Toolbox, key: MRKey, path: str) -> Anchor:
    refs = (await box.snapshot(key)).mr.diff_refs()
    change = await file_change(box, key, path)
    return Anchor(new_path=change.new_path or path, old_path=change.old_path or path,
                  new_line=None, old_line=None, base_sha=refs.base_sha,
                  start_sha=refs.start_sha, head_sha=refs.head_sha)


def _numbers(lines: LineMap, path: str, line: int, old: bool) -> tuple[int | None, int | None]:
    """(new, old) numbers of `line` as the host anchors it; BadInput when not shown."""
    if not old and line in lines.new:
        return line, lines.new[line]
    if old and line in lines.removed:
        return None, line
    if old and line in lines.old_context:
        return lines.old_context[line], line
    side = "old" if old else "new"
    raise BadInput(f"line {line} is not in the diff of {path} (numbered in the {side} "
                   f"file; `mr diff --path {path}` shows the lines a comment can go on"
                   + (")" if old else "; --old numbers removed lines)"))


async def lines_anchor(box: Toolbox, key: MRKey, path: str, line: int, old: bool,
                       end_line: int | None = None) -> Anchor:
    """The position of `line` — or of the range `line`..`end_line`, anchored at its last
    line as every host anchors one — in the file's diff."""
    refs = (await box.snapshot(key)).mr.diff_refs()
    change, diff = await _file_diff(box, key, path)
    lines = LineMap.of(diff)
    last = end_line if end_line is not None else line
    new_line, old_line = _numbers(lines, path, last, old)
    start_new = start_old = None
    if end_line is not None:
        start_new, start_old = _numbers(lines, path, line, old)
        if lines.hunk(line, old=old) != lines.hunk(end_line, old=old):
            raise BadInput(f"--line {line}-{end_line}: the range crosses a hunk of the diff "
                           f"of {path}: a range must lie within one hunk (comment on each "
                           "part, or on the whole file with --path alone)")
    return Anchor(new_path=change.new_path or path, old_path=change.old_path or path,
                  new_line=new_line, old_line=old_line, base_sha=refs.base_sha,
                  start_sha=refs.start_sha, head_sha=refs.head_sha,
                  start_new_line=start_new, start_old_line=start_old)


async def _file_diff(box: Toolbox, key: MRKey, path: str) -> tuple[FileChange, str]:
    """The file's change and hunks; BadInput when the MR does not change it, or shows no
    text diff of it (binary, too large)."""
    files = box.host(key).diff_files(key, MAX_FILE_BYTES, PathFilter((glob.escape(path),)))
    while (item := await box.call(key, "diff", anext(files, None))) is not None:
        if path not in (item.change.new_path, item.change.old_path):
            continue
        if item.skipped or item.change.binary:
            raise BadInput(f"{path} on {key}: {item.skipped or 'binary'} file: the diff "
                           "shows no line of it to comment on (--path alone comments on "
                           "the whole file)")
        return item.change, item.diff
    raise BadInput(f"{path} is not a file {key} changes (`mr diffstat` lists them)")
