"""A comment's `position` as GitLab's discussions API takes it: a line, a range of lines
(`line_range`), or a whole file (`position_type: file`). Pure.

Docs: https://docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff
(`position[line_range][start|end][line_code|type|old_line|new_line]`; `position_type`
`text`, `image` or `file`, the last since GitLab 16.4). The stored shape is the JSON schema
of gitlabhq app/validators/json_schemas/position.json: line numbers are integers or null
(a string is refused "must be a valid json schema", gitlab-org/gitlab#520794). A line
code is `Gitlab::Git.diff_line_code`: "<sha1 of the path>_<old pos>_<new pos>", the
positions git's diff gives the line (an added line's old position is the old line below
it, a removed line's new position the new line below it).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from livereview.core.model import Anchor

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def line_codes(path: str, diff: str) -> dict[tuple[int | None, int | None], str]:
    """(old_line, new_line) as a position names each shown line -> its line code."""
    digest = hashlib.sha1(path.encode(), usedforsecurity=False).hexdigest()
    codes: dict[tuple[int | None, int | None], str] = {}
    old = new = 0
    for text in diff.splitlines():
        if match := _HUNK.match(text):
            old, new = int(match[1]), int(match[2])
            continue
        kind = text[:1]
        key = {"+": (None, new), "-": (old, None), " ": (old, new)}.get(kind)
        if key is None:
            continue
        codes[key] = f"{digest}_{old}_{new}"
        old += kind != "+"
        new += kind != "-"
    return codes


def _end(codes: dict[tuple[int | None, int | None], str], old_line: int | None,
         new_line: int | None) -> dict[str, Any]:
    kind = None if old_line is not None and new_line is not None else (
        "new" if new_line is not None else "old")
    return {"line_code": codes.get((old_line, new_line), ""), "type": kind,
            "old_line": old_line, "new_line": new_line}


def position(anchor: Anchor, diff: str = "") -> dict[str, Any]:
    """The position of `anchor`; `diff` (the file's hunks) is needed for a range only."""
    where: dict[str, Any] = {
        "base_sha": anchor.base_sha, "start_sha": anchor.start_sha,
        "head_sha": anchor.head_sha, "new_path": anchor.new_path,
        "old_path": anchor.old_path or anchor.new_path}
    if anchor.whole_file:
        return {**where, "position_type": "file"}
    where.update(position_type="text", new_line=anchor.new_line, old_line=anchor.old_line)
    if anchor.start_line is not None:
        codes = line_codes(anchor.new_path, diff)
        where["line_range"] = {
            "start": _end(codes, anchor.start_old_line, anchor.start_new_line),
            "end": _end(codes, anchor.old_line, anchor.new_line)}
    return where
