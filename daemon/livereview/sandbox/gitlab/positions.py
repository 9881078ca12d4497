"""What GitLab does to a diff note's position when the merge request gets a new version.

MergeRequests::RefreshService runs Discussions::UpdateDiffPositionService over the MR's
diff discussions with the old and the new diff refs
(app/services/discussions/update_diff_position_service.rb): Gitlab::Diff::PositionTracer
follows the note's line from the old head to the new one. A line it can follow — the same
text, wherever it now is — gets `note.position = position` at the new refs (the thread
moves with its line); a line that was changed or removed makes the note *outdated*: its
`position` stays on the old version (`change_position` records where the change is, shown
in the UI only). The tracer here follows a new-side line by difflib's alignment of the
file at both heads; removed-line (old-side) positions are left where they are.
"""

from __future__ import annotations

import difflib

from livereview.sandbox.gitlab.model import JSON


def _aligned(before: str, after: str, line: int) -> int | None:
    """`line` of `before` in `after` when it is the same text there (an `equal` block)."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal" and i1 <= line - 1 < i2:
            return j1 + line - 1 - i1 + 1
    return None


def traced(position: JSON, trees: dict[str, dict[str, str]], base: str, head: str
           ) -> JSON | None:
    """The position at the new version (`base`..`head`), or None: outdated, left as is."""
    new_line, path = position.get("new_line"), position.get("new_path")
    if not isinstance(new_line, int) or not isinstance(path, str):
        return None
    before = trees[str(position["head_sha"])].get(path)
    after = trees[head].get(path)
    if before is None or after is None:
        return None
    moved = _aligned(before, after, new_line)
    if moved is None:
        return None
    # Unchanged against the new base, the line is a context line: numbered on both sides.
    old_line = _aligned(after, trees[base].get(path, ""), moved)
    return {**position, "base_sha": base, "start_sha": base, "head_sha": head,
            "new_line": moved, "old_line": old_line, "line_range": None}
